# SPDX-License-Identifier: MIT
"""A custom layer at native speed: ReLU over a Mat's storage in @micropython.viper code.

    micropython examples/viper_relu.py

A Python loop over blob[i] costs a method call per element. memoryview(blob) is the
Mat's own storage (no copy), and a viper function walks it as raw 32-bit words: a
float32 is negative exactly when its sign bit (bit 31) is set, so ReLU is "clear the
word when bit 31 is set". The padding ncnn leaves between channels is cleared too,
which is harmless.
"""

import micropython  # type: ignore[import-not-found]

import ncnn_mp


@micropython.viper  # type: ignore[untyped-decorator]
def relu_f32(buf, n: int):  # type: ignore[no-untyped-def]
    p = ptr32(buf)  # type: ignore[name-defined]  # noqa: F821 (a viper built-in)
    for i in range(n):
        if p[i] >> 31:  # ptr32 reads unsigned words: the sign bit, shifted down
            p[i] = 0


class ViperReLU(ncnn_mp.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def forward_inplace(self, blob: ncnn_mp.Mat, opt: ncnn_mp.Option) -> int:
        relu_f32(memoryview(blob), len(blob))
        return 0


def main() -> None:
    net = ncnn_mp.Net()
    net.register_custom_layer("ReLU", ViperReLU)  # replaces ncnn's built-in ReLU in this net
    net.load_param_mem("7767517\n2 2\nInput data 0 1 data 0=3 1=2 2=2\nReLU r 1 1 data out\n")
    net.load_model(b"")
    m = ncnn_mp.Mat(3, 2, 2)
    for i in range(len(m)):
        m[i] = (i % 5) - 2.5
    ex = net.create_extractor()
    ex.input("data", m)
    out = ex.extract("out")
    print("in: ", list(memoryview(m)))
    print("out:", list(memoryview(out)))


if __name__ == "__main__":
    main()

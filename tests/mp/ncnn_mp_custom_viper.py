# SPDX-License-Identifier: MIT
# A custom layer whose forward_inplace is @micropython.viper code over memoryview(blob).
from mptest import require

require("NCNN_STRING")  # layer and blob names
import micropython  # noqa: E402

import ncnn_mp  # noqa: E402
import viper_relu  # noqa: E402

# On the boards viper_relu is frozen: mpy-cross compiled it for the board's instruction set
# (Thumb-2, RV32IMC) when the firmware was built.
viper_relu.main()


# The firmware's own native emitter, at run time, as a script typed at a board's REPL gets it.
@micropython.viper
def abs_f32(buf, n: int):
    p = ptr32(buf)  # noqa: F821 (a viper built-in)
    keep = 1
    keep = ~(keep << 31)  # every bit but a float32's sign (viper has no machine-word constant this large)
    for i in range(n):
        p[i] = p[i] & uint(keep)  # noqa: F821


class ViperAbsVal(ncnn_mp.Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def forward_inplace(self, blob, opt):
        abs_f32(memoryview(blob), len(blob))
        return 0


net = ncnn_mp.Net()
net.register_custom_layer("AbsVal", ViperAbsVal)
net.load_param_mem("7767517\n2 2\nInput data 0 1 data 0=5\nAbsVal a 1 1 data out\n")
net.load_model(b"")
m = ncnn_mp.Mat(5)
for i, v in enumerate([-2.5, -0.0, 0.0, 1.25, -1024.0]):
    m[i] = v
with net.create_extractor() as ex:
    ex.input("data", m)
    out = ex.extract("out")
print("viper compiled here:", list(memoryview(out)))

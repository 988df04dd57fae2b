# SPDX-License-Identifier: MIT
"""Writing and registering a custom layer in Python, step by step.

    micropython examples/custom_layer_walkthrough.py

The network below is written inline: an Input, then our own layer type "Affine"
(y = x * scale + shift per channel, scale and shift stored as weights), then a
second custom type "SplitSign" with two tops (the positive and the negative part).
"""

import struct

import ncnn_mp

PARAM = """7767517
3 4
Input      data   0 1 data 0=3 1=1 2=2
Affine     aff    1 1 data y 0=2
SplitSign  split  1 2 y pos neg
"""


# 1. Subclass ncnn_mp.Layer and call super().__init__() first.
class Affine(ncnn_mp.Layer):
    def __init__(self) -> None:
        super().__init__()
        # 2. Say what the layer can do. ncnn reads these flags right after __init__.
        self.one_blob_only = True    # one bottom blob in, one top blob out
        self.support_inplace = True  # so ncnn calls forward_inplace, on a blob we may change
        self.channels = 0

    # 3. load_param gets this layer's "k=v" pairs from the .param line (here 0=2).
    def load_param(self, pd: ncnn_mp.ParamDict) -> int:
        self.channels = pd.get(0, 0)
        return 0 if self.channels > 0 else -1  # a non-zero code fails Net.load_param

    # 4. load_model reads weights from the .bin, in the order the layers appear.
    #    Type 1 is raw float32. The ModelBin is lent for this call only: the Mats it
    #    returns are ours, clone() is not needed, but keeping `mb` itself would not work.
    def load_model(self, mb: ncnn_mp.ModelBin) -> int:
        self.scale = mb.load(self.channels, 1)
        self.shift = mb.load(self.channels, 1)
        return 0

    # 5. forward_inplace changes the blob. A 3-D blob's channels start every cstep floats.
    def forward_inplace(self, blob: ncnn_mp.Mat, opt: ncnn_mp.Option) -> int:
        plane = blob.w * blob.h
        for c in range(blob.c):
            base = c * blob.cstep
            s, t = self.scale[c], self.shift[c]
            for i in range(base, base + plane):
                blob[i] = blob[i] * s + t
        return 0


# 6. A layer with several tops: one_blob_only = False, and forward gets a list of
#    bottoms. This one uses the CPython-ncnn style: forward(self, bottoms, tops, opt)
#    fills the top Mats it is given. (forward(self, bottoms, opt) returning a tuple
#    of Mats works too.) Bottoms are read-only: ncnn may feed them to other layers.
class SplitSign(ncnn_mp.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False

    def forward(self, bottoms: list[ncnn_mp.Mat], tops: list[ncnn_mp.Mat], opt: ncnn_mp.Option) -> int:
        x = bottoms[0]
        pos, neg = tops
        pos.clone_from(x)
        neg.clone_from(x)
        for i in range(len(x)):
            v = x[i]
            pos[i] = v if v > 0 else 0.0
            neg[i] = v if v < 0 else 0.0
        return 0


def main() -> None:
    # 7. Register the types on the Net *before* load_param: that is when ncnn creates layers.
    net = ncnn_mp.Net()
    net.register_custom_layer("Affine", Affine)
    net.register_custom_layer("SplitSign", SplitSign)
    net.load_param_mem(PARAM)
    # The .bin: Affine's scale for 2 channels, then its shift, as raw float32.
    net.load_model(struct.pack("<4f", 2.0, -1.0, 1.0, 0.0))
    # 8. Run it as any model.
    x = ncnn_mp.Mat(3, 1, 2)
    x.fill(1.0)
    ex = net.create_extractor()
    ex.input("data", x)
    pos, neg = ex.extract("pos"), ex.extract("neg")
    step = pos.cstep
    print("x = 1.0 everywhere; channel 0: 1*2+1, channel 1: 1*-1+0")
    print("pos", [pos[i] for i in range(3)], [pos[step + i] for i in range(3)])
    print("neg", [neg[i] for i in range(3)], [neg[step + i] for i in range(3)])
    # 9. A mistake inside a layer surfaces as an exception from the call that ran it
    #    (extract here), with a traceback line naming the layer; the Net keeps working.
    print("Python layers held by ncnn:", ncnn_mp.live_custom_layers())


if __name__ == "__main__":
    main()

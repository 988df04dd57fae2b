# SPDX-License-Identifier: MIT
# A Reshape's output shape is checked against its input before ncnn resolves it: a -1 that
# resolved to 0 made ncnn divide by zero (SIGFPE), and a reshape keeping the channels set the
# Mat's w and h unchecked (a larger plane read past each channel). Now a ValueError names the
# layer and the shape; the shapes ncnn resolves right run as before, in a Net and standalone.
import ncnn_mp
from mptest import check, packed, require

require("NCNN_STRING")
try:
    ncnn_mp.Layer("Reshape")
except ValueError:
    print("SKIP: this firmware's ncnn leaves out Reshape")
    raise SystemExit

opt = ncnn_mp.Option()
opt.num_threads = 1


def image(w, h, c=1):
    m = ncnn_mp.Mat(w, h, c)
    for q in range(c):
        for i in range(w * h):
            m[q * m.cstep + i] = q * 100 + i
    return m


def reshape(params, x, label):
    lay = ncnn_mp.Layer("Reshape")
    pd = ncnn_mp.ParamDict()
    for k, v in params.items():
        pd.set(k, v)
    lay.load_param(pd)
    try:
        out = lay.forward(x, opt)
        values = packed(out)  # (dims, count and sum: ncnn's x86 Reshape packs 4 or 8 to an element)
        print(label, "->", out.dims, len(values), sum(values))
    except ValueError as e:
        print(label, "-> ValueError:", e)


print("-- standalone")
reshape({0: -1}, image(4, 3, 2), "flatten 4x3x2 (0=-1)")
reshape({0: 6, 1: -1}, image(4, 3, 2), "6 x -1")
reshape({0: 0, 1: 0, 2: -1}, image(4, 3, 2), "0 0 -1 (keep)")
reshape({0: 2, 1: 6, 2: 2}, image(4, 3, 2), "2x6x2, same channels")
reshape({0: 8, 1: 8, 2: 2}, image(4, 3, 2), "8x8x2, same channels, larger planes")
reshape({0: 5, 1: 5}, image(4, 3, 2), "5x5 of 24 values")
reshape({0: -1, 1: -1, 2: 8}, image(2, 2, 1), "-1 -1 8 of 4 values (a division by zero)")
reshape({0: -1, 1: 3, 2: 16}, image(4, 3, 2), "-1 3 16 (resolves to 0)")
reshape({0: -5, 1: 2}, image(4, 3, 2), "-5 x 2")

print("-- in a Net")
net = ncnn_mp.Net()
net.opt = opt
net.load_param(b"""7767517
4 5
Input data 0 1 data
Split split 1 2 data a b
Reshape bad 1 1 a bad 0=-1 1=3 2=16
Reshape good 1 1 b good 0=-1 1=3
""")
net.load_model(b"")
with net.create_extractor() as ex:
    ex.input("data", image(4, 3, 2))
    check("bad", lambda: ex.extract("bad"))
    out = ex.extract("good")
    print("good ->", out.dims, len(packed(out)))
print("done")

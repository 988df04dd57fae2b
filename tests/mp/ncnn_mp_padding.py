# SPDX-License-Identifier: MIT
# Padding, one rule (ncnn_mp/guard/shape_padding.cpp). ncnn's padding copies every input row whole
# after its left pad, into an output of w + left + right columns: a pad negative on one side
# and positive on the other wrote past that output. A SAME Pooling (5=2) or Convolution
# (4=-233) whose stride exceeds its window along one axis pads one axis and "pads" the other
# by -1 each side: valgrind saw it write past the padded Mat (12x1 below), the issue SIGSEGV
# on larger ones; a Padding of 0=40 1=-60 hung or wrote past too, and a reflected border as
# wide as the input read outside it. Each is a ValueError naming the layer and its pads now, in a
# Net and standalone; fitting inputs and pads run as before, and the Net works on.
import struct

import ncnn_mp
from mptest import check, packed, require

require("NCNN_STRING")
try:
    for kind in ("Pooling", "Convolution", "Padding"):
        ncnn_mp.Layer(kind)
except ValueError:
    print("SKIP: this firmware's ncnn leaves out layers the script needs")
    raise SystemExit

opt = ncnn_mp.Option()
opt.num_threads = 1


def image(w, h, c=1):
    m = ncnn_mp.Mat(w, h, c)
    for i in range(w * h * c):
        m[(i // (w * h)) * m.cstep + i % (w * h)] = (i % 7) * 0.5
    return m


def layer(kind, params, *weights):
    lay = ncnn_mp.Layer(kind)
    pd = ncnn_mp.ParamDict()
    for k, v in params.items():
        pd.set(k, v)
    lay.load_param(pd)
    lay.load_model(ncnn_mp.ModelBin(from_mat_array=list(weights)))
    return lay


def run(label, lay, x):
    try:
        out = lay.forward(x, opt)
        print(label, "->", (out.w, out.h, out.c), packed(out)[:4])
    except ValueError as e:
        print(label, "-> ValueError:", e)


def weights(n):
    m = ncnn_mp.Mat(n)
    m.fill(0.25)
    return m


print("-- Pooling, SAME (pad_mode 2, 3): window 1x2, stride 3")
for mode in (2, 3):
    pool = layer("Pooling", {0: 0, 1: 1, 11: 2, 2: 3, 5: mode})
    run("pad_mode %d on 12x1 (w by -2, h by 1)" % mode, pool, image(12, 1))
    run("pad_mode %d on 7x7 (h by 1)" % mode, pool, image(7, 7))
    run("pad_mode %d on 12x3 (neither)" % mode, pool, image(12, 3))
print("-- Pooling, given pads")
run("pad_mode 1, left -1 right 2", layer("Pooling", {0: 0, 1: 2, 2: 1, 3: -1, 14: 2, 13: 0, 5: 1}), image(4, 4))
run("pad_mode 0, top -2", layer("Pooling", {0: 1, 1: 2, 2: 1, 13: -2, 5: 0}), image(4, 4))
run("pad_mode 1, pads 1", layer("Pooling", {0: 0, 1: 2, 2: 1, 3: 1, 5: 1}), image(4, 4))
run("pad_mode 0, window 9 on 4x4", layer("Pooling", {0: 0, 1: 9, 2: 1, 5: 0}), image(4, 4))

print("-- Convolution, SAME (4=-233, 4=-234): kernel 1x2, stride 3")
for pad in (-233, -234):
    conv = layer("Convolution", {0: 1, 1: 1, 11: 2, 3: 3, 4: pad, 6: 2}, weights(2))
    run("4=%d on 12x1" % pad, conv, image(12, 1))
    run("4=%d on 7x7" % pad, conv, image(7, 7))
run("explicit left -1 right 2", layer("Convolution", {0: 1, 1: 2, 4: -1, 15: 2, 14: 0, 6: 4}, weights(4)), image(4, 4))

print("-- Padding")
run("0=40 1=-60 on 4x64", layer("Padding", {0: 40, 1: -60}), image(4, 64))
run("2=-1 3=-1 on 4x4", layer("Padding", {2: -1, 3: -1}), image(4, 4))
run("7=-1 8=3 on 2x2x4 (channels)", layer("Padding", {7: -1, 8: 3}), image(2, 2, 4))
run("reflect 2=4 on 4x4", layer("Padding", {2: 4, 4: 2}), image(4, 4))
run("reflect 2=3 on 4x4", layer("Padding", {2: 3, 4: 2}), image(4, 4))
run("0=1 1=1 2=1 3=1", layer("Padding", {0: 1, 1: 1, 2: 1, 3: 1, 5: 9.0}), image(2, 2))
run("vector 2=1 3=2", layer("Padding", {2: 1, 3: 2, 5: 9.0}), image(2, 1).reshape(2))

print("-- in a Net")
net = ncnn_mp.Net()
net.opt = opt
net.load_param(b"""7767517
6 9
Input data 0 1 data
Split split 1 4 data a b c d
Pooling pool 1 1 a pool 0=0 1=1 11=2 2=3 5=2
Convolution conv 1 1 b conv 0=1 1=1 11=2 3=3 4=-233 6=2
Padding pad 1 1 c pad 0=40 1=-60
ReLU relu 1 1 d relu
""")
net.load_model(struct.pack("<I2f", 0, 0.25, 0.25))  # (a flag word: raw float32)
with net.create_extractor() as ex:
    ex.input("data", image(12, 1))
    for blob in ("pool", "conv", "pad", "relu"):
        check(blob, lambda: print(blob, "runs:", packed(ex.extract(blob))[:4]))
with net.create_extractor() as ex:
    ex.input("data", image(12, 3))
    for blob in ("pool", "conv"):
        check(blob + " on 12x3", lambda: print(blob, "runs:", packed(ex.extract(blob))[:4]))
print("done")

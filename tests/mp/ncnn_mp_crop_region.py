# SPDX-License-Identifier: MIT
# A Crop's region is checked against its input before ncnn crops: from its offsets and sizes,
# its numpy-style starts/ends/axes, a reference blob's shape or the ints it holds, and its
# expressions. Before, a region of no size (5=0, an offset past the end) was ncnn's -100, a
# MemoryError; a negative offset read before each row; fewer starts than the axes ncnn walks
# read past the list; an expression without an axes one took the top of an empty stack. Now a
# ValueError names the layer and the region; the regions that fit run as before.
import struct

import ncnn_mp
from mptest import check, packed, require, tried

require("NCNN_STRING")
try:
    ncnn_mp.Layer("Crop")
except ValueError:
    print("SKIP: this firmware's ncnn leaves out Crop")
    raise SystemExit

opt = ncnn_mp.Option()
opt.num_threads = 1


def image(w, h, c=1):
    m = ncnn_mp.Mat(w, h, c)
    for q in range(c):
        for i in range(w * h):
            m[q * m.cstep + i] = q * 100 + i
    return m


def ints(*xs):
    """A Mat of int32 values (a Mat over a buffer: its storage padded to 16 bytes)."""
    padded = xs + (0,) * (-len(xs) % 4)
    return ncnn_mp.Mat(len(xs), data=bytearray(struct.pack("<%di" % len(padded), *padded)))


ALL = {3: -233, 4: -233, 14: -233, 5: -233}  # (a size of -233: all of the input from the offset on)


def sized(**params):
    p = dict(ALL)
    p.update({int(k[1:]): v for k, v in params.items()})
    return p


def crop(params):
    lay = ncnn_mp.Layer("Crop")
    pd = ncnn_mp.ParamDict()
    for k, v in params.items():
        pd.set_array(k, ints(*v)) if isinstance(v, tuple) else pd.set_int(k, v)
    lay.load_param(pd)
    return lay


def run(label, params, *xs):
    lay = crop(params)

    tried(label, lambda: lay.forward(xs[0], opt) if len(xs) == 1 else lay.forward(list(xs), 1, opt)[0])


print("-- offsets and sizes (params 0-8)")
run("w from 1 for 2", sized(k0=1, k3=2), image(4, 3, 2))
run("c from 1", sized(k2=1), image(4, 3, 2))
run("5=0: no channels", sized(k5=0), image(4, 3, 2))
run("3=0 4=0: no plane", sized(k3=0, k4=0), image(4, 3, 2))
run("w from 5 of 4", sized(k0=5), image(4, 3, 2))
run("w from -2", sized(k0=-2, k3=3), image(4, 3, 2))
run("h from 1, 2 off the end, of 3", sized(k1=1, k7=2), image(4, 3, 2))
run("h from 1, 1 off the end", sized(k1=1, k7=1), image(4, 3, 2))
run("vector from 3 of 3", sized(k0=3), ncnn_mp.Mat(3))
print("-- numpy style (params 9-11)")
run("c 1:3 of 2", {9: (1,), 10: (3,), 11: (0,)}, image(4, 3, 2))
run("w 1:-1", {9: (1,), 10: (-1,), 11: (2,)}, image(4, 3, 2))
run("w 5:9 of 4", {9: (5,), 10: (9,), 11: (2,)}, image(4, 3, 2))
run("w -9:2 of 4", {9: (-9,), 10: (2,), 11: (-1,)}, image(4, 3, 2))
run("one start for 3 axes", {9: (1,), 10: (2,)}, image(4, 3, 2))
print("-- to a reference (two inputs)")
run("at 1,1 to 3x3 of 4x4", {0: 1, 1: 1}, image(4, 4, 2), image(3, 3, 2))
run("at 1,1 to 4x4 of 4x4", {0: 1, 1: 1}, image(4, 4, 2), image(4, 4, 1))
run("at 1,1 to 4x4x2 of 4x4x2 (all of it: handed on)", {0: 1, 1: 1}, image(4, 4, 2), image(4, 4, 2))
run("ints 1 1 0 2 2 2", {0: -233}, image(4, 4, 2), ints(1, 1, 0, 2, 2, 2))
run("ints 3 1 0 2 2 2", {0: -233}, image(4, 4, 2), ints(3, 1, 0, 2, 2, 2))
run("ints, 3 of 6", {0: -233}, image(4, 4, 2), ints(1, 1, 0))

print("-- expressions, in a Net (params 19-21)")
for label, exprs in (
        ("w 1:3", '19="1" 20="3" 21="-1"'),
        ("w 1:-(0w) (0)", '19="1" 20="neg(0w)" 21="-1"'),
        ("h 0:0h//2", '19="0" 20="//(0h,2)" 21="1"'),
        ("no axes expression", '19="1" 20="3"'),
        ("malformed", '19="+" 20="3" 21="-1"'),
        ("a blob it lacks", '19="1w" 20="3" 21="-1"'),
        ("overflow", '19="*(0w,1000000000)" 20="3" 21="-1"')):
    net = ncnn_mp.Net()
    net.opt = opt
    net.load_param(("""7767517
2 2
Input data 0 1 data
Crop crop 1 1 data out %s
""" % exprs).encode())
    net.load_model(b"")
    with net.create_extractor() as ex:
        ex.input("data", image(4, 3, 2))

        tried(label, lambda: ex.extract("out"))
        tried(label + ", again", lambda: ex.extract("out"))

print("-- in a Net, then the net works on")
net = ncnn_mp.Net()
net.opt = opt
net.load_param(b"""7767517
4 5
Input data 0 1 data
Split split 1 2 data a b
Crop bad 1 1 a bad 3=-233 4=-233 5=0
Crop good 1 1 b good 0=1 3=2 4=-233 5=-233
""")
net.load_model(b"")
with net.create_extractor() as ex:
    ex.input("data", image(4, 3, 2))
    check("extract bad", lambda: ex.extract("bad"))
    print("good:", packed(ex.extract("good"))[:4])
print("done")

# SPDX-License-Identifier: MIT
# A Slice cut at explicit indices (param 2; its axis, param 1) is checked against its input
# and its outputs before ncnn cuts: as many outputs as indices and one, or fewer (the indices
# past them unread); each piece, from where the last one ended to its index (from the end if
# negative; the last piece to the end), inside the input and 1 or more long. Before, an empty
# piece (an index equal to the one before it, 0, or the extent) was ncnn's -100, a MemoryError,
# and more than 16 pieces were refused as "fewer pieces than the outputs"; now a ValueError
# names the layer and the piece. The slices list (param 0) goes through the same replay.
import struct

import ncnn_mp
from mptest import check, packed, require, tried

require("NCNN_STRING")

opt = ncnn_mp.Option()
opt.num_threads = 1


def ints(*xs):
    """A Mat of int32 values (a Mat over a buffer: its storage padded to 16 bytes)."""
    padded = xs + (0,) * (-len(xs) % 4)
    return ncnn_mp.Mat(len(xs), data=bytearray(struct.pack("<%di" % len(padded), *padded)))


def counting(*shape):
    """A Mat of shape (w, h, c), 0, 1, 2, ... in order."""
    m = ncnn_mp.Mat(*shape)
    plane = m.w * m.h
    for q in range(m.c):
        for i in range(plane):
            m[q * m.cstep + i] = q * plane + i
    return m


def net(tops, params):
    names = " ".join("o%d" % i for i in range(tops))
    n = ncnn_mp.Net()
    n.opt = opt
    n.load_param(("7767517\n2 %d\nInput data 0 1 data\nSlice s 1 %d data %s %s\n"
                  % (tops + 1, tops, names, params)).encode())
    n.load_model(b"")
    return n


def cut(label, tops, params, x):
    """The Slice in a Net: every output's shape and values, or what the extract raised."""
    n = net(tops, params)
    with n.create_extractor() as ex:
        ex.input("data", x)
        try:
            outs = [ex.extract("o%d" % i) for i in range(tops)]
        except Exception as e:
            print(label, "->", type(e).__name__ + ":", e)
            return
    print(label, "->", [(o.w, o.h, o.c) for o in outs], [packed(o)[0] for o in outs])


def indices(*xs):
    return "1=0 -23302=%d,%s" % (len(xs), ",".join(str(x) for x in xs))


print("-- indices against the outputs")
cut("[2, 5] of 8, 3 outputs", 3, indices(2, 5), counting(8))
cut("[2, 5] of 8, 2 outputs (index 5 unread)", 2, indices(2, 5), counting(8))
cut("[2, 5] of 8, 4 outputs", 4, indices(2, 5), counting(8))
cut("[-3] of 8", 2, indices(-3), counting(8))
print("-- indices out of range")
cut("[2, 9] of 8", 3, indices(2, 9), counting(8))
cut("[9] of 8 (the last piece from 9)", 2, indices(9), counting(8))
cut("[-9, 3] of 8", 3, indices(-9, 3), counting(8))
cut("[5, 2] of 8", 3, indices(5, 2), counting(8))
cut("[2147483647] of 8", 2, indices(2147483647), counting(8))
cut("[-2147483648] of 8", 2, indices(-2147483648), counting(8))
print("-- empty pieces")
cut("[0] of 8", 2, indices(0), counting(8))
cut("[3, 3] of 8", 3, indices(3, 3), counting(8))
cut("[8] of 8", 2, indices(8), counting(8))
cut("[-8] of 8", 2, indices(-8), counting(8))
cut("slices -233 x 3 of 2", 3, "1=0 -23300=3,-233,-233,-233", counting(2))
print("-- along an axis")
cut("h [1] of 4x3", 2, "1=0 -23302=1,1", counting(4, 3))
cut("w [1] of 4x3", 2, "1=1 -23302=1,1", counting(4, 3))
cut("w [5] of 4x3", 2, "1=1 -23302=1,5", counting(4, 3))
cut("c [3] of 2x2x8", 2, "1=0 -23302=1,3", counting(2, 2, 8))
cut("c [3, 3] of 2x2x8", 3, "1=0 -23302=2,3,3", counting(2, 2, 8))
cut("axis -3 of 4x3", 2, "1=-3 -23302=1,1", counting(4, 3))
print("-- more pieces than the guard follows")
cut("17 pieces of 20", 17, indices(*range(1, 17)), counting(20))
cut("16 pieces of 20", 16, indices(*range(1, 16)), counting(20))

print("-- standalone")
lay = ncnn_mp.Layer("Slice")
pd = ncnn_mp.ParamDict()
pd.set_array(2, ints(2, 5))
lay.load_param(pd)
tried("[2, 5] of 8, piece 1", lambda: lay.forward([counting(8)], 3, opt)[1])
tried("[2, 5] of 4", lambda: lay.forward([counting(4)], 3, opt)[1])
check("[2, 5] of 8, 4 outputs", lambda: lay.forward([counting(8)], 4, opt))
tried("[2, 5] of 5 (last piece empty)", lambda: lay.forward([counting(5)], 3, opt)[2])

print("-- in a Net, then the net works on")
n = net(3, indices(3, 3))
with n.create_extractor() as ex:
    ex.input("data", counting(8))
    check("extract o0", lambda: ex.extract("o0"))
    ex.input("data", counting(4))
    check("extract o0 of 4", lambda: ex.extract("o0"))
n = net(3, indices(2, 5))
with n.create_extractor() as ex:
    ex.input("data", counting(8))
    print("good:", packed(ex.extract("o2")))
print("done")

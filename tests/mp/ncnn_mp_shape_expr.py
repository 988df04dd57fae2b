# SPDX-License-Identifier: MIT
# The shape expressions of Interp (param 9) and Reshape (param 6) are evaluated as ncnn
# evaluates them, checked, and their sizes go through the same rules as sizes from parameters:
# ncnn took the top of an empty stack for a malformed expression (an operator short of its
# operands, no token at all), overflowed ints, and sized its output from what came out (an
# Interp of a negative size, a Reshape's -1 resolved to 0). Now a ValueError names the layer
# and the expression; the expressions that fit run as before.
import ncnn_mp
from mptest import require, tried

require("NCNN_STRING")
for kind in ("Interp", "Reshape"):
    try:
        ncnn_mp.Layer(kind)
    except ValueError:
        print("SKIP: this firmware's ncnn leaves out", kind)
        raise SystemExit

opt = ncnn_mp.Option()
opt.num_threads = 1


def image(w, h, c=1):
    m = ncnn_mp.Mat(w, h, c)
    m.fill(1.5)
    return m


def extract(layer):
    net = ncnn_mp.Net()
    net.opt = opt
    net.load_param(("7767517\n2 2\nInput data 0 1 data\n%s\n" % layer).encode())
    net.load_model(b"")
    with net.create_extractor() as ex:
        ex.input("data", image(4, 3, 2))
        return ex.extract("out")


for label, layer in (
        ("Interp to 0w*2, 0h*2", 'Interp up 1 1 data out 0=1 9="*(0w,2),*(0h,2)"'),
        ("Interp to 0w+1 (w only)", 'Interp up 1 1 data out 0=1 9="+(0w,1)"'),
        ("Interp to -(0w)", 'Interp up 1 1 data out 0=1 9="neg(0w),2"'),
        ("Interp to 0w//0 (a division by zero)", 'Interp up 1 1 data out 0=1 9="//(0w,0),2"'),
        ("Interp, malformed (+ of one)", 'Interp up 1 1 data out 0=1 9="+(2)"'),
        ("Interp, three sizes", 'Interp up 1 1 data out 0=1 9="2,2,2"'),
        ("Interp to 1e10 (past int)", 'Interp up 1 1 data out 0=1 9="1e10,2"'),
        ("Reshape to 0w*0h, 0c", 'Reshape r 1 1 data out 6="*(0w,0h),0c"'),
        ("Reshape to -1, 5", 'Reshape r 1 1 data out 6="-1,5"'),
        ("Reshape to -1, 0w*8 (resolves to 0)", 'Reshape r 1 1 data out 6="-1,*(0w,8)"'),
        ("Reshape, malformed (* of nothing)", 'Reshape r 1 1 data out 6="*"'),
        ("Reshape, 0h lshift 40", 'Reshape r 1 1 data out 6="lshift(0h,40)"')):
    tried(label, lambda: extract(layer))
print("done")

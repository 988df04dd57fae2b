# SPDX-License-Identifier: MIT
# int8 between layers (docs/models.md "int8 between layers"; quantize_int8.py --chain): a Convolution
# with int8_scale_term > 100 writes int8, which ReLU, max and average Pooling, Concat, Slice, ShuffleChannel,
# Crop, Interp, Reshape and Permute pass on (ncnn_mp/kernels/kernel_pass.cpp) to int8 layers. Each pass
# layer's int8 output is compared with ncnn's own layer run on the same values as floats (a
# second Net), and an int8 Convolution reading it with that Convolution on the floats. Where a
# chain ends at a network output, the floats q / scale or (int8 outputs) the int8 values with
# their scale. A param that hands an int8 blob to a layer that cannot read it is refused at
# load, naming both, and the Net loads the next param as if nothing happened.
import struct

import ncnn_mp
from mptest import check, require

require("NCNN_STRING", "NCNN_INT8", "NCNN_MP_KERNELS")

CIN, C = 3, 8
TS = 32.0  # the int8 blobs' scale: a power of two, so q / TS * TS is q again
seed = 11


def rand(n):
    global seed
    seed = (seed * 75 + 74) % 65537
    return seed % n


def int8_conv(cin, cout, top):
    """A 1x1 int8 Convolution's weights: int8 values, weight scales 100, bottom scale (TS for a
    reader of an int8 blob, else 100), and the output scale TS when it writes int8."""
    vals = bytes((rand(255) - 127) & 0xFF for _ in range(cin * cout))
    out = struct.pack("<I", 0x000D4B38) + vals + bytes((4 - len(vals) % 4) % 4)
    out += struct.pack("<%df" % cout, *([100.0] * cout))
    return out + struct.pack("<f", 100.0 if top else TS) + (struct.pack("<f", TS) if top else b"")


def conv_line(name, bottom, top, cin, cout, writes):
    return "Convolution %s 1 1 %s %s 0=%d 1=1 6=%d 8=%d" % (name, bottom, top, cout, cin * cout, 102 if writes else 2)


def net_of(lines, weights=b""):
    net = ncnn_mp.Net()
    net.opt.num_threads = 1
    net.load_param_mem("7767517\n%d %d\n%s\n" % (len(lines), blobs(lines), "\n".join(lines)))
    net.load_model(weights)
    return net


def blobs(lines):
    names = set()
    for line in lines:
        parts = line.split()
        n_in, n_out = int(parts[2]), int(parts[3])
        names.update(parts[4:4 + n_in + n_out])
    return len(names)


def data(w, h, c):
    m = ncnn_mp.Mat(w, h, c)
    for q in range(c):
        for i in range(w * h):
            m[q * m.cstep + i] = (rand(2001) - 1000) / 1000
    return m


def run(net, inputs, outputs):
    with net.create_extractor() as ex:
        for name, m in inputs.items():
            ex.input(name, m)
        return [ex.extract(name) for name in outputs]


def same(a, b):
    if (a.dims, a.w, a.h, a.c) != (b.dims, b.w, b.h, b.c):
        return "shape %s vs %s" % ((a.dims, a.w, a.h, a.c), (b.dims, b.w, b.h, b.c))
    return "equal" if a.to_bytes() == b.to_bytes() else "differs"


def scaled(m, k):
    out = m.clone()
    for q in range(m.c):
        for i in range(m.w * m.h):
            out[q * out.cstep + i] = m[q * m.cstep + i] * k
    return out


def rounded_to(got, want):
    """An int8 layer's output against ncnn's float layer on the same values: each an integer
    within half a step of the float (ties either way)."""
    if (got.dims, got.w, got.h, got.c) != (want.dims, want.w, want.h, want.c):
        return "shape %s vs %s" % ((got.dims, got.w, got.h, got.c), (want.dims, want.w, want.h, want.c))
    for q in range(got.c):
        for i in range(got.w * got.h):
            g, w = got[q * got.cstep + i], want[q * want.cstep + i]
            if g != int(g) or abs(g - w) > 0.5:
                return "differs at %d: %r vs %r" % (q * got.w * got.h + i, g, w)
    return "equal, rounded"


def pass_case(label, line, producers, tops, reader=True, compare=same):
    """line: the pass layer, reading producers' int8 blobs a (a2), writing tops."""
    prod_lines, weights = ["Input data 0 1 data"], b""
    if len(producers) > 1:  # (ncnn's params give a blob read twice to a Split)
        prod_lines.append("Split sp 1 %d data %s" % (len(producers), " ".join("d_" + n for n in producers)))
    for name in producers:
        prod_lines.append(conv_line("c_" + name, "data" if len(producers) == 1 else "d_" + name, name, CIN, C, True))
        weights += int8_conv(CIN, C, True)
    x = data(6 + rand(5), 5 + rand(5), CIN)
    chained = net_of(prod_lines + [line], weights)
    got = run(chained, {"data": x}, producers + tops)
    made, outs = got[:len(producers)], got[len(producers):]
    # ncnn's own layer on the same values as floats
    plain = net_of(["Input %s 0 1 %s" % (n, n) for n in producers] + [line])
    want = run(plain, dict(zip(producers, made)), tops)
    a = made[0]
    values = [a[q * a.cstep + i] for q in range(a.c) for i in range(a.w * a.h)]
    print(label, [compare(g, w) for g, w in zip(outs, want)], "int8 values:", len(set(values)) > 20 and min(values) < 0 < max(values))
    chained.close()
    plain.close()
    if not reader:
        return
    # an int8 Convolution reading the int8 blob, against it reading the floats q / TS
    cin = outs[0].c
    w9 = int8_conv(cin, 4, False)
    chained = net_of(prod_lines + [line, conv_line("c9", tops[0], "out", cin, 4, False)], weights + w9)
    b, out = run(chained, {"data": x}, [tops[0], "out"])
    plain = net_of(["Input b 0 1 b", conv_line("c9", "b", "out", cin, 4, False)], w9)
    (want,) = run(plain, {"b": scaled(b, 1 / TS)}, ["out"])
    print(label, "read by an int8 Convolution:", same(out, want))
    chained.close()
    plain.close()


pass_case("ReLU", "ReLU r 1 1 a b", ["a"], ["b"])
pass_case("max Pooling 2/2", "Pooling p 1 1 a b 0=0 1=2 2=2", ["a"], ["b"])
pass_case("max Pooling 3/2 pad 1 full", "Pooling p 1 1 a b 0=0 1=3 2=2 3=1", ["a"], ["b"])
pass_case("max Pooling 3/1 pad 1 valid", "Pooling p 1 1 a b 0=0 1=3 2=1 3=1 5=1", ["a"], ["b"])
pass_case("max Pooling 3/2 SAME upper", "Pooling p 1 1 a b 0=0 1=3 2=2 5=2", ["a"], ["b"])
pass_case("max Pooling 2x3/2 SAME lower", "Pooling p 1 1 a b 0=0 1=2 11=3 2=2 5=3", ["a"], ["b"])
pass_case("max Pooling global", "Pooling p 1 1 a b 0=0 4=1", ["a"], ["b"], reader=False)


def mean_rounded(got, want):
    """An int8 average Pooling against ncnn's float one on the same values: each the float mean
    rounded half away from zero (float2int8's rounding; the means of a few int8 values are exact)."""
    if (got.dims, got.w, got.h, got.c) != (want.dims, want.w, want.h, want.c):
        return "shape %s vs %s" % ((got.dims, got.w, got.h, got.c), (want.dims, want.w, want.h, want.c))
    for q in range(got.c):
        for i in range(got.w * got.h):
            g, w = got[q * got.cstep + i], want[q * want.cstep + i]
            r = int(abs(w) + 0.5)
            if g != (r if w >= 0 else -r):
                return "differs at %d: %r vs %r" % (q * got.w * got.h + i, g, w)
    return "equal, rounded"


# average Pooling: ncnn's windows, pads and areas (count_include_pad 6=0 or 1; its tail pad in
# pad_mode 0, SAME's in 2 and 3, counted there as ncnn counts them)
for label, params in (("2/2", "1=2 2=2"), ("3/2 pad 1 full", "1=3 2=2 3=1"), ("3/2 pad 1 full counting pads", "1=3 2=2 3=1 6=1"),
                      ("3/1 pad 1 valid", "1=3 2=1 3=1 5=1"), ("3/2 pad 1 valid counting pads", "1=3 2=2 3=1 5=1 6=1"),
                      ("3/2 SAME upper", "1=3 2=2 5=2"), ("2x3/2 SAME lower", "1=2 11=3 2=2 5=3"),
                      ("3/2 SAME upper, pads given too", "1=3 2=2 3=1 5=2"), ("4/3 pad 2 full", "1=4 2=3 3=2"),
                      ("global", "4=1")):
    pass_case("average Pooling " + label, "Pooling p 1 1 a b 0=1 " + params, ["a"], ["b"], reader=label != "global",
              compare=mean_rounded)
pass_case("Concat", "Concat k 2 1 a a2 b 0=0", ["a", "a2"], ["b"])
pass_case("Slice", "Slice s 1 2 a b b2 -23300=2,-233,-233 1=0", ["a"], ["b", "b2"])
pass_case("ShuffleChannel", "ShuffleChannel s 1 1 a b 0=2", ["a"], ["b"])
pass_case("Crop", "Crop c 1 1 a b 0=1 1=2 3=3 4=2 5=-233", ["a"], ["b"])
pass_case("Crop to a reference", "Crop c 2 1 a a2 b 0=1 1=1", ["a", "a2"], ["b"])
pass_case("Interp nearest x2", "Interp i 1 1 a b 0=1 1=2.0 2=2.0", ["a"], ["b"])
pass_case("Interp nearest to 7x9", "Interp i 1 1 a b 0=1 3=9 4=7", ["a"], ["b"])
pass_case("Interp bilinear x2", "Interp i 1 1 a b 0=2 1=2.0 2=2.0", ["a"], ["b"], compare=rounded_to)
pass_case("Interp bilinear x0.5", "Interp i 1 1 a b 0=2 1=0.5 2=0.5", ["a"], ["b"], compare=rounded_to)
pass_case("Interp bicubic to 7x9", "Interp i 1 1 a b 0=3 3=9 4=7", ["a"], ["b"], compare=rounded_to)
# (bilinear x2 and x0.5 above: taps in 16ths, channels after the first in integers; these two
# in 16ths too, or not: the float path for every channel)
pass_case("Interp bilinear x2 align corners", "Interp i 1 1 a b 0=2 1=2.0 2=2.0 6=1", ["a"], ["b"], compare=rounded_to)
pass_case("Interp bilinear to 7x9", "Interp i 1 1 a b 0=2 3=9 4=7", ["a"], ["b"], compare=rounded_to)


def binary_case(label, op, model, scales=None):
    """An int8 BinaryOp of two int8 blobs in scale TS (or scales: the ones it is told) into scale
    TO = 24 (the model's multipliers given as integers, so that it computes the kernel's integers
    on every port), against `model`."""
    sa, sb = scales or (TS, TS)
    lines = ["Input data 0 1 data", "Split sp 1 2 data d1 d2", conv_line("c1", "d1", "a", CIN, C, True),
             conv_line("c2", "d2", "a2", CIN, C, True),
             "BinaryOp op 2 1 a a2 b 0=%d 20=%.2f 21=%.2f 22=24.0" % (op, sa, sb)]
    chained = net_of(lines, int8_conv(CIN, C, True) + int8_conv(CIN, C, True))
    a, a2, b = run(chained, {"data": data(7, 6, CIN)}, ["a", "a2", "b"])
    bad = 0
    for q in range(b.c):
        for i in range(b.w * b.h):
            x, y = int(a[q * a.cstep + i]), int(a2[q * a2.cstep + i])
            bad += b[q * b.cstep + i] != max(-127, min(127, model(x, y)))
    print(label, "int8 from int8:", "equal" if not bad else "%d differ" % bad, b.w, b.h, b.c)
    chained.close()


def sigmoid_case():
    """An int8 Sigmoid (its input's scale TS as param 20) reads the int8 blob into floats through
    a table: against ncnn's Sigmoid on q / TS (within 1e-6: the desktop's is x86's own exp)."""
    lines = ["Input data 0 1 data", conv_line("c1", "data", "a", CIN, C, True), "Sigmoid s 1 1 a b 20=%.1f" % TS]
    chained = net_of(lines, int8_conv(CIN, C, True))
    a, b = run(chained, {"data": data(7, 6, CIN)}, ["a", "b"])
    plain = net_of(["Input a 0 1 a", "Sigmoid s 1 1 a b"])
    (want,) = run(plain, {"a": scaled(a, 1 / TS)}, ["b"])
    worst = max(abs(b[q * b.cstep + i] - want[q * want.cstep + i]) for q in range(b.c) for i in range(b.w * b.h))
    print("Sigmoid int8 to float:", b.elemsize, "within 1e-6:", worst <= 1e-6, b.w, b.h, b.c)
    chained.close()
    plain.close()


sigmoid_case()


def flat(m):
    return [m[q * m.cstep + i] for q in range(m.c) for i in range(m.w * m.h * m.d)]


def softmax_case(label, mid, params):
    """An int8 Softmax (its input's scale TS as param 20) along an axis of a blob of 1 to 4
    dimensions (mid: Reshapes of the int8 blob a into r), into floats through a table of exp:
    against ncnn's Softmax on q / TS (within 1e-6: the table's x - max and the product by 1 / sum
    round once less or more than ncnn's floats)."""
    lines = ["Input data 0 1 data", conv_line("c1", "data", "a", CIN, C, True)] + mid + \
            ["Softmax s 1 1 r b %s 20=%.1f" % (params, TS)]
    chained = net_of(lines, int8_conv(CIN, C, True))
    a, b = run(chained, {"data": data(7, 6, CIN)}, ["a", "b"])
    plain = net_of(["Input a 0 1 a"] + mid + ["Softmax s 1 1 r b " + params])
    (want,) = run(plain, {"a": scaled(a, 1 / TS)}, ["b"])
    got, want = flat(b), flat(want)
    worst = max(abs(g - w) for g, w in zip(got, want))
    print("Softmax", label, "int8 to float:", b.elemsize, (b.dims, b.w, b.h, b.d, b.c), "within 1e-6:", worst <= 1e-6)
    chained.close()
    plain.close()


for axis in (0, 1, 2, -1):
    softmax_case("3-D axis %d" % axis, ["Noop n 1 1 a r"], "0=%d 1=1" % axis)
for axis in (0, 1):
    softmax_case("2-D axis %d" % axis, ["Reshape rs 1 1 a r 0=42 1=8"], "0=%d 1=1" % axis)
for axis in (0, 1, 2, 3):
    softmax_case("4-D axis %d" % axis, ["Reshape rs 1 1 a r 0=7 1=3 11=2 2=8"], "0=%d 1=1" % axis)
softmax_case("1-D", ["Reshape rs 1 1 a r 0=-1"], "0=0")
binary_case("BinaryOp add", 0, lambda x, y: (x * 12582912 + y * 12582912 + (1 << 23)) >> 24)  # (24 / 32 * 2^24)
binary_case("BinaryOp mul", 2, lambda x, y: (x * y * 25165824 + (1 << 29)) >> 30)  # (24 / 32^2 * 2^30)
# ratios whose multipliers have low 16 bits (round(24 / 20.5 * 2^24), round(24 / 44.25 * 2^24))
binary_case("BinaryOp add, other scales", 0, lambda x, y: (x * 19641619 + y * 9099507 + (1 << 23)) >> 24, (20.5, 44.25))

# Refused at load: each layer below would read the int8 blob `a` as floats.
net = ncnn_mp.Net()
base = ["Input data 0 1 data", conv_line("c0", "data", "a", CIN, C, True)]
for label, line in (("Softmax", "Softmax s 1 1 a b"), ("leaky ReLU", "ReLU r 1 1 a b 0=0.1"),
                    ("BinaryOp without int8 scales", "Split sp 1 2 a s1 s2\nBinaryOp o 2 1 s1 s2 b 0=0"),
                    ("int8 BinaryOp given a float blob", "Split sp 1 2 data e1 e2\nBinaryOp o 2 1 a e2 b 0=0 20=1.0 21=1.0 22=1.0"),
                    ("Interp of a dynamic size", "Split sp 1 2 a s1 s2\nInterp i 2 1 s1 s2 b 0=1 5=1"),
                    ("adaptive Pooling", "Pooling p 1 1 a b 0=1 7=1 8=2 18=2"),
                    ("fp32 Convolution", "Convolution f 1 1 a b 0=2 1=1 6=16"),
                    ("fp32 InnerProduct", "InnerProduct f 1 1 a b 0=2 2=%d" % (C * 4)),
                    ("Concat of int8 and float", None),
                    ("ReLU after a Split", "Split sp 1 2 a s1 s2\nReLU r 1 1 s1 b 0=0.5")):
    lines = base + line.split("\n") if line else ["Input data 0 1 data", "Split sp 1 2 data e1 e2",
                                                   conv_line("c0", "e1", "a", CIN, C, True), "Concat k 2 1 a e2 b 0=0"]
    check(label, lambda: net.load_param_mem("7767517\n%d %d\n%s\n" % (len(lines), blobs(lines), "\n".join(lines))))
# the same Net then loads and runs a param that fits
lines = base + ["ReLU r 1 1 a b"]
net.load_param_mem("7767517\n%d %d\n%s\n" % (len(lines), blobs(lines), "\n".join(lines)))
net.load_model(int8_conv(CIN, C, True))
(b,) = run(net, {"data": data(4, 4, CIN)}, ["b"])
print("after the refusals:", b.w, b.h, b.c, min(b[q * b.cstep + i] for q in range(b.c) for i in range(16)) == 0)
net.close()

# ncnn_mp's int8 max Pooling takes its pads from the padding rule (ncnn_mp/guard/shape_padding.cpp):
# a SAME Pooling (5=2) of window 1x2 at stride 6 on 12x1 "pads" w by -2 and -3 while it pads h,
# which it took as it came and wrote before its workspace (heap corruption). Refused now,
# naming the layer and the pads; the same Net runs an input that fits.
lines = ["Input data 0 1 data", conv_line("c0", "data", "a", CIN, C, True), "Pooling p 1 1 a b 0=0 1=1 11=2 2=6 5=2"]
net = net_of(lines, int8_conv(CIN, C, True))
check("int8 max Pooling SAME on 12x1", lambda: run(net, {"data": data(12, 1, CIN)}, ["b"]))
(b,) = run(net, {"data": data(12, 3, CIN)}, ["b"])
print("int8 max Pooling SAME on 12x3:", b.w, b.h, b.c, b.elemsize)
net.close()

# Reshape and Permute pass int8 on (a detector's heads: Slice, Reshape, Permute): against ncnn's
# own layers on the same values as floats, every order of ncnn's Permute on 2-D, 3-D and 4-D
# blobs (ncnn_mp's finds each order's axes by permuting a small float blob through ncnn's).
pass_case("Reshape to 2-D", "Reshape r 1 1 a b 0=-1 1=%d" % C, ["a"], ["b"], reader=False)
for order in range(6):
    pass_case("Permute 3-D order %d" % order, "Permute p 1 1 a b 0=%d" % order, ["a"], ["b"], reader=order == 1)


def moved_case(label, lines, shape_lines):
    """lines after the int8 producer `a`: int8 on to `b`; against ncnn's layers (shape_lines,
    reading `a`'s values as floats) writing `b` from them."""
    head = ["Input data 0 1 data", conv_line("c1", "data", "a", CIN, C, True)]
    chained = net_of(head + lines, int8_conv(CIN, C, True))
    a, b = run(chained, {"data": data(5, 4, CIN)}, ["a", "b"])
    plain = net_of(["Input a 0 1 a"] + shape_lines)
    (want,) = run(plain, {"a": a}, ["b"])
    print(label, same(b, want), b.dims, b.w, b.h, b.d, b.c)
    chained.close()
    plain.close()
    return a, b


for order in range(2):
    line = ["Reshape r 1 1 a r1 0=-1 1=%d" % C, "Permute p 1 1 r1 b 0=%d" % order]
    moved_case("Permute 2-D order %d" % order, line, line)
for order in range(24):
    line = ["Reshape r 1 1 a r1 0=5 1=2 11=2 2=%d" % C, "Permute p 1 1 r1 b 0=%d" % order]
    moved_case("Permute 4-D order %d" % order, line, line)

# Where the chain ends at a network output: a Reshape or Permute with its input's scale (param
# 20) writes the values as floats q / TS (exact: TS is a power of two), ...
for kind, line in (("Reshape", "Reshape r 1 1 a b 0=-1 1=%d 20=%.1f" % (C, TS)),
                   ("Permute", "Permute p 1 1 a b 0=2 20=%.1f" % TS)):
    lines = ["Input data 0 1 data", conv_line("c1", "data", "a", CIN, C, True), line]
    chained = net_of(lines, int8_conv(CIN, C, True))
    a, b = run(chained, {"data": data(5, 4, CIN)}, ["a", "b"])
    plain = net_of(["Input a 0 1 a", line.replace(" 20=%.1f" % TS, "")])
    (want,) = run(plain, {"a": scaled(a, 1 / TS)}, ["b"])
    print(kind, "int8 to float, q / scale:", same(b, want), b.elemsize, chained.output_int8_scale("b"))
    chained.close()
    plain.close()

# ... or, with int8 outputs (quantize_int8 --int8-outputs), hands it on int8 with its scale as
# param 21: extract gives the int8 Mat itself (ncnn's extract would cast it to unscaled floats)
# and Net.output_int8_scale the scale; a Sigmoid with an output scale (21) writes int8
# probabilities through a table, each float2int8(sigmoid(q / TS) * 127).
lines = ["Input data 0 1 data", conv_line("c1", "data", "a", CIN, C, True), "Split sp 1 2 a a1 a2",
         "Permute p 1 1 a1 b 0=1 21=%.1f" % TS, "Sigmoid s 1 1 a2 p 20=%.1f 21=127.0" % TS]
chained = net_of(lines, int8_conv(CIN, C, True))
a, b, p = run(chained, {"data": data(5, 4, CIN)}, ["a", "b", "p"])
print("int8 outputs:", b.elemsize, p.elemsize, chained.output_int8_scale("b"), chained.output_int8_scale("p"),
      chained.output_int8_scale("a"))
signed = [v - 256 if v > 127 else v for v in memoryview(b)[:b.w * b.h]]  # (channel 0: not the padding after it)
print("Permute int8 output, q as computed:", signed[:b.w * b.h] == [a[k % b.w * a.w + k // b.w] for k in range(b.w * b.h)])
plain = net_of(["Input a 0 1 a", "Sigmoid s 1 1 a b"])
(want,) = run(plain, {"a": scaled(a, 1 / TS)}, ["b"])
pv = memoryview(p)
got = [pv[q * p.cstep + i] for q in range(p.c) for i in range(p.w * p.h)]
worst = max(abs(got[q * p.w * p.h + i] - want[q * want.cstep + i] * 127) for q in range(p.c) for i in range(p.w * p.h))
print("Sigmoid int8 to int8 within half a step:", worst <= 0.5 + 1e-4, 0 <= min(got) < max(got) <= 127)
check("output_int8_scale of a blob the net lacks", lambda: chained.output_int8_scale("nothing"))
chained.close()
plain.close()

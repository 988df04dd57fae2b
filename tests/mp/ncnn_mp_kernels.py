# ncnn_mp's own kernels (NCNN_MP_KERNELS: ncnn_mp/kernels.h) against ncnn's layers, case by
# case: the same layer, parameters, weights and input run inside a Net (where ncnn_mp's
# Net makes its kernel) and standalone (Layer(type): ncnn's own layer). Random shapes,
# kernels 1/3/5 (and non-square), strides 1/2, dilation, explicit and SAME (-233, -234)
# padding with pad values, groups and depthwise, bias on and off, activations 0-6,
# int8 (int8 weights, fp32 weights quantized at load, scale 0, requantized int8 outputs)
# and fp32; InnerProduct on vectors, images and rows.
#
# On the boards ncnn's own layer is its generic code, what the kernels replace: every
# output must be equal, bit for bit (int8: the same int32 sums and float steps; fp32: the
# same sums in the same order). On Unix ncnn's layer is its x86 code (other sum orders,
# FMA): floats within BOUND of the largest output, requantized int8 within one step.
import gc
import struct

import ncnn_mp
from mptest import ON_MCU, mat, require

require("NCNN_STRING", "NCNN_INT8", "NCNN_MP_KERNELS")

EXACT = ON_MCU
BOUND = 1e-4
CASES = 60  # per kind and precision

seed = 7


def rand(n):
    """0 .. n-1, from a small LCG (the same draws on every platform; no long ints)."""
    global seed
    seed = (seed * 75 + 74) % 65537
    return seed % n


def uniform(lo, hi):
    return lo + (hi - lo) * rand(10001) / 10000


def pick(*xs):
    return xs[rand(len(xs))]


def floats(n, lo=-1.0, hi=1.0):
    return [uniform(lo, hi) for _ in range(n)]


def option():
    opt = ncnn_mp.Option()
    opt.num_threads = 1
    for flag in ("use_packing_layout", "use_fp16_storage", "use_fp16_packed", "use_fp16_arithmetic",
                 "use_bf16_storage", "use_bf16_packed"):
        setattr(opt, flag, False)
    return opt


OPT = option()


def activation(params):
    """An activation type and its params (ncnn's keys 9 and 10), as text and for a ParamDict."""
    t = rand(7)
    p = {2: [pick(0.1, -0.3)], 3: [-0.5, 0.75], 6: [0.2, 0.5]}.get(t, [])
    if t == 3 and rand(3) == 0:
        p = [-1, 1]  # integers in the text: ncnn converts them
    params[9] = t
    if p:
        params[10] = p


def text(params):
    out = []
    for k, v in params.items():
        if isinstance(v, list):
            out.append("-%d=%d,%s" % (23300 + k, len(v), ",".join(str(x) for x in v)))
        else:
            out.append("%d=%s" % (k, v))
    return " ".join(out)


def int8_weights(n):
    """n int8 weights, ncnn's tagged form (tag 0x000D4B38, padded to 4 bytes)."""
    vals = [rand(255) - 127 for _ in range(n)]
    return struct.pack("<I", 0x000D4B38) + struct.pack("<%db" % n, *vals) + bytes((4 - n % 4) % 4)


def fp32_weights(n):
    return struct.pack("<I", 0) + struct.pack("<%df" % n, *floats(n))


def raw(xs):
    return struct.pack("<%df" % len(xs), *xs)


def make_case(kind, int8):
    """(layer type, params, weights bytes, input shape)."""
    params = {}
    w, h = 3 + rand(10), 3 + rand(10)
    if kind == "InnerProduct":
        w, h = 2 + rand(7), 2 + rand(7)  # (the boards' Python heap holds the weights as bytes)
        shape = pick((w,), (w, h), (w, h, 1 + rand(3)))
        outch = 1 + rand(9)
        n = 1
        for e in shape:
            n *= e
        if len(shape) == 2 and rand(2):
            n = w  # rows of w: ncnn's gemm form
        params.update({0: outch, 1: rand(2), 2: outch * n})
        scales = outch
    else:
        group = 1
        c = 1 + rand(6)
        outch = 1 + rand(7)
        if kind == "ConvolutionDepthWise":
            group = pick(c, c, 1) if rand(3) else c
            c = group * pick(1, 1, 2)
            outch = group * (1 if c == group and rand(2) else 1 + rand(3))
        k = pick(1, 3, 3, 5)
        kh = k if rand(5) else pick(1, 3)
        params.update({0: outch, 1: k, 11: kh, 2: pick(1, 1, 2), 3: pick(1, 2), 5: rand(2)})
        if rand(3) == 0:
            params[12] = pick(1, 2)
            params[13] = pick(1, 2)
        pad = pick(0, 1, 2, -233, -234) if kh == k else pick(0, 1, 2)  # (SAME on a non-square
        # kernel can pad one side negative: ncnn's Padding writes past its output, the kernels refuse)
        if pad:
            params[4] = pad
            if pad > 0 and rand(2):
                params[15], params[14], params[16] = rand(3), rand(3), pad
            if rand(2):
                params[18] = pick(0.5, -1.0, 2.0)
        params[6] = outch * (c // group) * k * kh
        if kind == "ConvolutionDepthWise":
            params[7] = group
        # an input no smaller than the dilated kernel (the guard refuses that)
        w = max(w, (k - 1) * params[2] + 1)
        h = max(h, (kh - 1) * params.get(12, params[2]) + 1)
        shape = (w, h, c) if rand(6) else (w, h)
        if len(shape) == 2 and c != 1:
            shape = (w, h, c)
        scales = outch if kind == "Convolution" else group
    activation(params)
    size = params[6] if kind != "InnerProduct" else params[2]
    quantized_at_load = int8 and rand(3) == 0
    weights = int8_weights(size) if int8 and not quantized_at_load else fp32_weights(size)
    if params.get(5 if kind != "InnerProduct" else 1):
        weights += raw(floats(outch, -2.0, 2.0))
    if int8:
        term = 1
        if kind == "ConvolutionDepthWise" and rand(3) == 0:
            term, scales = 2, 1
        if kind != "InnerProduct" and rand(4) == 0:
            term += 100  # the output requantized to int8
        params[8] = term
        ws = [pick(0.0, 60.0, 127.0, 90.5, 300.0) if rand(8) == 0 else uniform(40.0, 200.0) for _ in range(scales)]
        if quantized_at_load:
            ws = [uniform(60.0, 127.0) for _ in range(scales)]
        weights += raw(ws) + raw([uniform(30.0, 120.0)])
        if term > 100:
            weights += raw([uniform(5.0, 60.0)])
    return kind, params, weights, shape


def input_mat(shape):
    m = ncnn_mp.Mat(*shape)
    for q in range(m.c):
        base = q * m.cstep
        for i in range(m.w * m.h):
            m[base + i] = uniform(-1.2, 1.2)
    return m


def in_net(kind, params, weights, x):
    net = ncnn_mp.Net()
    net.opt = OPT
    net.load_param_mem("7767517\n2 2\nInput data 0 1 data\n%s layer 1 1 data out %s\n" % (kind, text(params)))
    net.load_model(weights)
    with net.create_extractor() as ex:
        ex.input("data", x)
        out = ex.extract("out")
    net.close()
    return out


def standalone(kind, params, weights, x):
    layer = ncnn_mp.Layer(kind)
    pd = ncnn_mp.ParamDict()
    for k, v in params.items():
        pd.set(k, mat(*v) if isinstance(v, list) else v)
    assert layer.load_param(pd) in (0, None)
    layer.load_model(ncnn_mp.ModelBin(from_datareader=ncnn_mp.DataReader(from_memory=weights)))
    layer.create_pipeline(OPT)
    return layer.forward(x, OPT)


def values(m):
    """A Mat's elements in order (channel padding left out): floats, or int8."""
    data = m.to_bytes()
    n = len(data) // m.elemsize
    return list(struct.unpack("<%d%s" % (n, "f" if m.elemsize == 4 else "b"), data))


def differs(a, b):
    """Where a (the kernel's, from a Net) and b (ncnn's, standalone) differ beyond what this
    platform allows. (An extract hands out a requantized int8 blob as floats.)"""
    if (a.dims, a.w, a.h, a.c) != (b.dims, b.w, b.h, b.c) or (a.elemsize != b.elemsize and b.elemsize != 1):
        return "shape %s vs %s" % ((a.dims, a.w, a.h, a.c, a.elemsize), (b.dims, b.w, b.h, b.c, b.elemsize))
    va, vb = values(a), values(b)
    if EXACT:
        bad = [i for i in range(len(va)) if va[i] != vb[i] and not (va[i] != va[i] and vb[i] != vb[i])]
        return "element %d: %r vs %r" % (bad[0], va[bad[0]], vb[bad[0]]) if bad else None
    if b.elemsize == 1:
        bad = [i for i in range(len(va)) if abs(va[i] - vb[i]) > 1]
    else:
        top = max([1.0] + [abs(v) for v in vb])
        bad = [i for i in range(len(va)) if abs(va[i] - vb[i]) > BOUND * top]
    return "element %d: %r vs %r" % (bad[0], va[bad[0]], vb[bad[0]]) if bad else None


for kind in ("Convolution", "ConvolutionDepthWise", "InnerProduct"):
    for int8 in (False, True):
        failed = 0
        for n in range(CASES):
            gc.collect()
            case = make_case(kind, int8)
            x = input_mat(case[3])
            got, want = in_net(case[0], case[1], case[2], x), standalone(case[0], case[1], case[2], x)
            why = differs(got, want)
            if why:
                failed += 1
                print("differs:", kind, "int8" if int8 else "fp32", text(case[1]), case[3], why)
        print(kind, "int8" if int8 else "fp32", CASES, "cases:", "failed %d" % failed if failed else
              ("equal" if EXACT else "within bound"))

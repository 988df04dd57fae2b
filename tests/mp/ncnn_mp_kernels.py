# SPDX-License-Identifier: MIT
# ncnn_mp's own kernels (NCNN_MP_KERNELS: ncnn_mp/kernels/kernels.h) against ncnn's layers, case by
# case: the same layer, parameters, weights and input run inside a Net (where ncnn_mp's
# Net makes its kernel) and standalone (Layer(type): ncnn's own layer). Random shapes,
# kernels 1/3/5 (and non-square), strides 1/2, dilation, explicit and SAME (-233, -234)
# padding with pad values, groups and depthwise, bias on and off, activations 0-6,
# int8 (int8 weights, fp32 weights quantized at load, scale 0, requantized int8 outputs)
# and fp32; InnerProduct on vectors, images and rows. A requantized int8 output with a
# ReLU, leaky ReLU, clip or none is the kernels' fixed-point step (kernels.h Requant): equal
# to this script's model of it (requant, apply_requant), within one int8 step of ncnn's
# float steps (on the boards, where ncnn's generic layer is the reference).
#
# On the boards ncnn's own layer is its generic code, what the kernels replace: every
# output must be equal, bit for bit (int8: the same int32 sums and float steps; fp32: the
# same sums in the same order). On Unix (the memcheck and asan firmwares: the plain unix one
# has no kernels and prints SKIP) ncnn's own layer is its x86 code (other sum orders,
# and it differs from the generic code: a Convolution with pad value -1 and pads 1/2/1/1
# gave 0.0 where the generic code gives 0.184, and its dilated path segfaults on small
# inputs); there the reference is model_layer below, the generic code's arithmetic in
# Python with every float32 operation emulated: equal too, but for sigmoid and mish,
# whose exp/log/tanh are Python's (within 1e-6).
import gc
import math
import struct
from array import array

import ncnn_mp
from mptest import ON_MCU, mat, require

require("NCNN_STRING", "NCNN_INT8", "NCNN_MP_KERNELS")

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
    for flag in ("use_packing_layout", "use_fp16_storage", "use_fp16_packed", "use_fp16_arithmetic", "use_bf16_storage", "use_bf16_packed"):
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
    """n int8 weights: ncnn's tagged form (tag 0x000D4B38, padded to 4 bytes), and the values."""
    vals = array("b", (rand(255) - 127 for _ in range(n)))
    return struct.pack("<I", 0x000D4B38) + bytes(vals) + bytes((4 - n % 4) % 4), vals


def fp32_weights(n):
    vals = array("f", (uniform(-1.0, 1.0) for _ in range(n)))
    return struct.pack("<I", 0) + bytes(vals), vals


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
    model = {"bias": None, "ws": None, "quantized_at_load": quantized_at_load}
    weights, model["w"] = int8_weights(size) if int8 and not quantized_at_load else fp32_weights(size)
    if params.get(5 if kind != "InnerProduct" else 1):
        model["bias"] = array("f", floats(outch, -2.0, 2.0))
        weights += bytes(model["bias"])
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
        model["ws"], model["bs"], model["ts"] = [f32(v) for v in ws], f32(uniform(30.0, 120.0)), None
        weights += raw(ws) + raw([model["bs"]])
        if term > 100:
            model["ts"] = f32(uniform(5.0, 60.0))
            weights += raw([model["ts"]])
    return kind, params, weights, shape, model


def f32(v):
    """v rounded to float32. On Unix (double floats) one float32 operation is emulated
    exactly by doing it in double and rounding: double has more than 2 * 24 + 2 bits."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def to_int8(v):
    """ncnn's float2int8: round half away from zero, then [-127, 127]."""
    if abs(v) >= 127.5:
        return 127 if v > 0 else -127
    r = int(abs(v) + 0.5)
    return r if v >= 0 else -r


SIGMOID_CLAMP = f32(88.3762626647949)


def act(v, t, p):
    """ncnn's fused activation on a float32 value, one rounding per operation."""
    if t == 1:
        return v if v > 0 else 0.0
    if t == 2:
        return v if v > 0 else f32(v * p[0])
    if t == 3:
        v = p[0] if v < p[0] else v
        return p[1] if v > p[1] else v
    if t == 4:
        v = SIGMOID_CLAMP if SIGMOID_CLAMP < v else v
        v = -SIGMOID_CLAMP if v < -SIGMOID_CLAMP else v
        return f32(1 / f32(1 + f32(math.exp(-v))))
    if t == 5:
        return f32(v * f32(math.tanh(f32(math.log(f32(f32(math.exp(v)) + 1))))))
    if t == 6:
        lower = f32(-p[1] / p[0])
        upper = f32(f32(1 / p[0]) + lower)
        if v < lower:
            return 0.0
        return v if v > upper else f32(v * f32(f32(v * p[0]) + p[1]))
    return v


def fixed_point(v):
    """v > 0 as (mult, shift): v = mult * 2^-shift, mult its 24-bit mantissa, if 26 <= shift <= 56."""
    if not v > 0:
        return None
    bits = struct.unpack("<I", struct.pack("<f", v))[0]
    shift = 150 - (bits >> 23)
    if bits >> 23 in (0, 255) or not 26 <= shift <= 56:
        return None
    return (bits & 0x7FFFFF) | 0x800000, shift


def requant(scale_in, d, ts, bias, t, p, n):
    """kernel_requant.cpp's make_requant in this script's words: (bias in units of the sum,
    (mult, shift), (mult, shift) below zero, lo, hi), or None where the float steps stay.
    n: the products a sum adds (the sum + bias must stay within 32 bits)."""
    pos = fixed_point(f32(scale_in * ts)) if scale_in != 0 else None
    v = f32((bias or 0.0) * d)
    if pos is None or not -(1 << 30) < v < (1 << 30):
        return None
    a = abs(v)
    r = int(a) + (1 if a - int(a) >= 0.5 else 0)
    if 16129 * n + r > 0x7FFFFFFF:
        return None
    neg, lo, hi = pos, -127, 127
    if t == 1 or (t == 2 and p[0] == 0):
        lo = 0
    elif t == 2:
        neg = fixed_point(f32(f32(scale_in * ts) * p[0]))
        if neg is None:
            return None
    elif t == 3:
        lo, hi = to_int8(f32(p[0] * ts)), to_int8(f32(p[1] * ts))
        if lo > hi:
            return None
    elif t != 0:
        return None
    return (r if v >= 0 else -r), pos, neg, lo, hi


def apply_requant(s, rq):
    """The kernels' fixed-point step: round((sum + bias) * mult / 2^shift) half up, clamped."""
    x = s + rq[0]
    mult, shift = rq[2] if x < 0 else rq[1]
    q = (x * mult + (1 << (shift - 1))) >> shift
    return rq[3] if q < rq[3] else rq[4] if q > rq[4] else q


fixed_cases, fixed_apart = 0, 0


def dequantize(s, wscale, m, bias, t, p, n=0):
    """ncnn's int8 epilogue: sum * (1 / (input scale * weight scale)), + bias, activation,
    requantized with the output scale when the layer has one: by the kernels' fixed-point
    step where it applies (an int8 output, a piecewise linear activation)."""
    global fixed_cases, fixed_apart
    scale_in = 0.0 if wscale == 0 else f32(1 / f32(m["bs"] * wscale))
    v = f32(f32(s) * scale_in)
    if bias is not None:
        v = f32(v + bias)
    v = act(v, t, p)
    if m["ts"] is None:
        return v
    q = to_int8(f32(v * m["ts"]))
    rq = requant(scale_in, f32(m["bs"] * wscale), m["ts"], bias, t, p, n)
    if rq is None:
        return q
    fixed_cases += 1
    fq = apply_requant(s, rq)
    fixed_apart = max(fixed_apart, abs(fq - q))  # (against ncnn's float steps)
    return fq


def model_weights(m, per_row, row_scale):
    """The int8 weights (fp32 ones quantized as ncnn does at load, row by row)."""
    if not m["quantized_at_load"]:
        return m["w"]
    return [to_int8(f32(v * row_scale(i // per_row))) for i, v in enumerate(m["w"])]


def model_layer(kind, params, shape, m, x, int8):
    """What ncnn's generic code computes (its convolution.cpp, convolutiondepthwise.cpp,
    innerproduct.cpp, quantize.cpp, padding.cpp, as documented there), in this script's own
    words: the flat output values and their shape."""
    t, p = params.get(9, 0), [f32(v) for v in params.get(10, [])]
    bias = m["bias"]
    if int8:
        x = [to_int8(f32(v * m["bs"])) for v in x]
    if kind == "InnerProduct":
        outch, n = params[0], params[2] // params[0]
        rows = shape[1] if len(shape) == 2 and shape[0] == n else 1
        wt = model_weights(m, n, lambda r: m["ws"][r]) if int8 else m["w"]
        out = floats_of(rows * outch)
        for r in range(rows):
            for o in range(outch):
                xs, ws = x[r * n:r * n + n], wt[o * n:o * n + n]
                if int8:
                    v = dequantize(sum(a * b for a, b in zip(xs, ws)), m["ws"][o], m, bias and bias[o], t, p)
                else:
                    acc = bias[o] if bias else 0.0
                    for a, b in zip(xs, ws):
                        acc = f32(acc + f32(a * b))
                    v = act(acc, t, p)
                out[r * outch + o] = v
        return out, ((2, outch, rows, 1) if rows > 1 or len(shape) == 2 and shape[0] == n else (1, outch, 1, 1))
    w, h = shape[0], shape[1]
    c = shape[2] if len(shape) == 3 else 1
    outch, kw, kh = params[0], params[1], params[11]
    dw, sw = params[2], params[3]
    dh, sh = params.get(12, dw), params.get(13, sw)
    group = params.get(7, 1)
    pl = params.get(4, 0)
    pr, pt = params.get(15, pl), params.get(14, pl)
    pb, pv = params.get(16, pt), params.get(18, 0.0)
    ext_w, ext_h = dw * (kw - 1) + 1, dh * (kh - 1) + 1
    pads = (0, 0, 0, 0)
    if pl > 0 or pr > 0 or pt > 0 or pb > 0:
        pads = (pt, pb, pl, pr)
    elif pl in (-233, -234):
        wpad, hpad = ext_w + (w - 1) // sw * sw - w, ext_h + (h - 1) // sh * sh - h
        if wpad > 0 or hpad > 0:
            lo_h, lo_w = (hpad // 2, wpad // 2) if pl == -233 else (hpad - hpad // 2, wpad - wpad // 2)
            pads = (lo_h, hpad - lo_h, lo_w, wpad - lo_w)
    W, H = w + pads[2] + pads[3], h + pads[0] + pads[1]
    fill = int(pv) if int8 else f32(pv)
    img = []
    for q in range(c):
        plane = [fill] * (W * H) if int8 else floats_of(W * H)
        for i in range(W * H):
            plane[i] = fill
        for y in range(h):
            at = (y + pads[0]) * W + pads[2]
            for i in range(w):
                plane[at + i] = x[q * w * h + y * w + i]
        img.append(plane)
    outw, outh = (W - ext_w) // sw + 1, (H - ext_h) // sh + 1
    inch_g, outch_g, maxk = c // group, outch // group, kw * kh
    ofs = [i * dh * W + j * dw for i in range(kh) for j in range(kw)]

    def wscale(o):
        return m["ws"][o] if kind == "Convolution" else m["ws"][o // outch_g if len(m["ws"]) > 1 else 0]

    wt = model_weights(m, inch_g * maxk, wscale) if int8 else m["w"]
    out = floats_of(outch * outh * outw)
    at_out = 0
    for o in range(outch):
        g = o // outch_g
        for i in range(outh):
            for j in range(outw):
                at = i * sh * W + j * sw
                base = o * inch_g * maxk
                if int8:
                    s = 0
                    for q in range(inch_g):
                        plane = img[g * inch_g + q]
                        for k in range(maxk):
                            s += plane[at + ofs[k]] * wt[base + q * maxk + k]
                    out[at_out] = dequantize(s, wscale(o), m, bias and bias[o], t, p, inch_g * maxk)
                else:
                    acc = bias[o] if bias else 0.0
                    for q in range(inch_g):
                        plane = img[g * inch_g + q]
                        for k in range(maxk):
                            acc = f32(acc + f32(plane[at + ofs[k]] * wt[base + q * maxk + k]))
                    out[at_out] = act(acc, t, p)
                at_out += 1
    return out, (3, outw, outh, outch)


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
    """A Mat's elements in order (channel padding left out): floats, or int8. (Arrays, not
    lists: a list's boxed floats, made among the model's temporaries, scatter over the
    heap and leave no room for a larger block on Unix's 2 MiB.)"""
    return array("f" if m.elemsize == 4 else "b", m.to_bytes())


def floats_of(n):
    return array("f", bytes(4 * n))


def differs(got, want, loose):
    """Where got (the kernel's, from a Net: a requantized int8 blob comes out as floats) and
    want (a Mat from ncnn's layer, or (values, (dims, w, h, c)) from the model) differ. loose:
    the model's sigmoid and mish use Python's exp, log and tanh, not the C library's float
    ones (within 1e-6 relative; loose == "int8": a requantized value within one step)."""
    shape = (got.dims, got.w, got.h, got.c)
    if isinstance(want, tuple):
        vb, want_shape = want
    else:
        vb, want_shape = values(want), (want.dims, want.w, want.h, want.c)
    if shape != want_shape:
        return "shape %s vs %s" % (shape, want_shape)
    va = values(got)
    if loose:
        bad = [i for i in range(len(va)) if abs(va[i] - vb[i]) > (1 if loose == "int8" else 1e-6 * abs(vb[i]))]
    else:
        bad = [i for i in range(len(va)) if va[i] != vb[i] and not (va[i] != va[i] and vb[i] != vb[i])]
    return "element %d: %r vs %r" % (bad[0], va[bad[0]], vb[bad[0]]) if bad else None


for kind in ("Convolution", "ConvolutionDepthWise", "InnerProduct"):
    for int8 in (False, True):
        failed = 0
        for n in range(CASES):
            gc.collect()
            kind, params, weights, shape, m = make_case(kind, int8)
            x = input_mat(shape)
            got = in_net(kind, params, weights, x)
            if ON_MCU:  # ncnn's own layer is its generic code (a fixed-point requantization: one step apart)
                fixed = int8 and m["ts"] is not None and params.get(9, 0) in (0, 1, 2, 3)
                why = differs(got, standalone(kind, params, weights, x), "int8" if fixed else False)
            else:  # this script's model of that code
                loose = params.get(9) in (4, 5) and ("int8" if int8 and m["ts"] is not None else True)
                why = differs(got, model_layer(kind, params, shape, m, values(x), int8), loose)
            if why:
                failed += 1
                print("differs:", kind, "int8" if int8 else "fp32", text(params), shape, why)
        print(kind, "int8" if int8 else "fp32", CASES, "cases:", "failed %d" % failed if failed else "equal")


def wide_case(c, k, outch, w, h, extreme):
    """An int8 Convolution whose sums add more products than the lx106 assembly takes a call
    (kernel_xtensa.h: 508 a chunk), its chunks' edges inside kernel rows; extreme: weights and
    inputs at the int8 ends (127, and weights +-127, -128): rows 0, 2, 4 sum products of one sign."""
    n = c * k * k
    params = {0: outch, 1: k, 11: k, 2: 1, 3: 1, 5: 0, 6: outch * n, 8: 1, 9: 0}
    if extreme:
        vals = array("b", (pick(127, -127, -128) if o % 2 else (127 if o < 2 else -128) for o in range(outch)
                           for _ in range(n)))
    else:
        vals = array("b", (rand(255) - 127 for _ in range(outch * n)))
    ws = [f32(uniform(40.0, 200.0)) for _ in range(outch)]
    m = {"bias": None, "ws": ws, "bs": f32(100.0), "ts": None, "quantized_at_load": False, "w": vals}
    weights = struct.pack("<I", 0x000D4B38) + bytes(vals) + bytes((4 - len(vals) % 4) % 4) + raw(ws) + raw([m["bs"]])
    x = ncnn_mp.Mat(w, h, c)
    for q in range(c):
        for i in range(w * h):
            x[q * x.cstep + i] = 2.0 if extreme else uniform(-1.2, 1.2)
    return params, weights, (w, h, c), m, x


failed = 0
for c, k, outch, w, h, extreme in ((64, 3, 5, 6, 5, True), (64, 3, 3, 7, 3, False), (600, 1, 3, 3, 3, True),
                                   (113, 3, 2, 5, 4, False), (1100, 1, 2, 2, 3, False)):
    gc.collect()
    params, weights, shape, m, x = wide_case(c, k, outch, w, h, extreme)
    got = in_net("Convolution", params, weights, x)
    if ON_MCU:
        want = standalone("Convolution", params, weights, x)
    else:
        want = model_layer("Convolution", params, shape, m, values(x), True)
    why = differs(got, want, False)
    if why:
        failed += 1
        print("differs: wide", c, k, outch, w, h, extreme, why)
    x = got = want = None
print("Convolution int8 wide sums:", "failed %d" % failed if failed else "equal")
assert ON_MCU or fixed_cases > 0, "no case reached the fixed-point requantization"
assert fixed_apart <= 1, "the fixed-point requantization %d steps from ncnn's float steps" % fixed_apart

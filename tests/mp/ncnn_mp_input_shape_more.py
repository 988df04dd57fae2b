# SPDX-License-Identifier: MIT
# The shape guard's rules beyond channel and value counts (ncnn_mp/guard/shape_rules.cpp): the
# layers whose weights or parameters fix their input in other ways. Each misfit below read
# past a weight, a blob or a parameter array, or divided by zero (SIGFPE), before: now a
# ValueError names what the layer takes; the fitting input next to it still runs.
import struct

import ncnn_mp
from mptest import check, packed

try:
    for kind in ("Gemm", "LayerNorm", "Convolution1D", "Deconvolution1D", "Convolution3D", "GroupNorm", "RNN",
                 "LSTM", "SDPA", "Embed", "Slice", "MatMul", "Normalize"):
        ncnn_mp.Layer(kind)
except Exception:
    print("SKIP: this firmware's ncnn leaves out layers the script needs")
    raise SystemExit

opt = ncnn_mp.Option()


def filled(*shape, value=1.0):
    m = ncnn_mp.Mat(*shape)
    m.fill(value)
    return m


def layer(kind, params, *weights):
    lay = ncnn_mp.Layer(kind)
    pd = ncnn_mp.ParamDict()
    for k, v in params.items():
        pd.set(k, v)
    lay.load_param(pd)
    lay.load_model(ncnn_mp.ModelBin(from_mat_array=list(weights)))
    return lay


def run(lay, inputs, n_top):
    """forward(mat, opt) for one blob in and out, as a Net calls a one_blob_only layer."""
    if len(inputs) == 1 and n_top == 1:
        return [lay.forward(inputs[0], opt)]
    return lay.forward(list(inputs), n_top, opt)


def fits(label, lay, *inputs, n_top=1):
    print(label, "runs:", [packed(t)[:4] for t in run(lay, inputs, n_top)])


def refused(label, lay, *inputs, n_top=1):
    check(label, lambda: run(lay, inputs, n_top))


ints = lambda *xs: ncnn_mp.Mat(len(xs), data=struct.pack("<%di" % (len(xs) + (-len(xs)) % 4), *(xs + (0,) * ((-len(xs)) % 4))))

print("-- Gemm with a constant B: A's inner size must be B's (constantK)")
gemm = layer("Gemm", {4: 0, 5: 1, 6: 1, 10: -1, 8: 3, 9: 4}, filled(3, 4))  # B: K=4 rows of N=3, no C
fits("A of 2x4", gemm, filled(4, 2))
refused("A of 2x5", gemm, filled(5, 2))

print("-- Gemm of two inputs: A's K (its w) is B's (its h, a vector's 1; transposed its w)")
gemm2 = layer("Gemm", {})
fits("2x4 by 4x3", gemm2, filled(4, 2), filled(3, 4))
refused("a vector of 6 by a vector of 6", gemm2, filled(6), filled(6))
fits("a vector of 1 by a vector of 6", gemm2, filled(1), filled(6))
fits("a vector of 6 by a vector of 6 transposed", layer("Gemm", {3: 1}), filled(6), filled(6))

print("-- MatMul: A's width is B's height")
matmul = ncnn_mp.Layer("MatMul")
fits("2x4 by 4x3", matmul, filled(4, 2), filled(3, 4))
refused("2x5 by 4x3", matmul, filled(5, 2), filled(3, 4))

print("-- LayerNorm: affine_size values at a time")
norm = layer("LayerNorm", {0: 4}, filled(4), filled(4, value=0.0))
fits("rows of 4", norm, filled(4, 3))
refused("rows of 5", norm, filled(5, 3))

print("-- GroupNorm: the channels its parameter names, normalised in place")
group = layer("GroupNorm", {0: 2, 1: 4}, filled(4), filled(4, value=0.0))
fits("4 channels", group, filled(2, 2, 4))
refused("3 channels", group, filled(2, 2, 3))

print("-- Normalize: a scale per channel")
normalize = layer("Normalize", {3: 3}, filled(3))
refused("4 channels", normalize, filled(2, 2, 4))

print("-- Convolution1D / Deconvolution1D: channels along h, the kernel along w")
conv1d = layer("Convolution1D", {0: 2, 1: 3, 6: 18}, filled(18))  # 3 input channels
fits("length 8, 3 channels", conv1d, filled(8, 3))
refused("length 8, 4 channels", conv1d, filled(8, 4))
refused("length 2, 3 channels", conv1d, filled(2, 3))
refused("an image", conv1d, filled(8, 3, 2))
deconv1d = layer("Deconvolution1D", {0: 2, 1: 3, 6: 18}, filled(18))
refused("deconvolution, 5 channels", deconv1d, filled(8, 5))

print("-- Convolution3D: channels of a volume")
conv3d = layer("Convolution3D", {0: 1, 1: 1, 6: 2}, filled(2))  # 2 input channels, 1x1x1
fits("2 channels", conv3d, filled(2, 2, 2, 2))
refused("3 channels", conv3d, filled(2, 2, 2, 3))

print("-- RNN / LSTM: each step's width is a weight row's")
rnn = layer("RNN", {0: 4, 1: 20}, filled(20), filled(4), filled(16))
fits("steps of 5", rnn, filled(5, 2))
refused("steps of 6", rnn, filled(6, 2))
lstm = layer("LSTM", {0: 2, 1: 48}, filled(48), filled(8), filled(16))
refused("LSTM, steps of 7", lstm, filled(7, 3))

print("-- SDPA: key heads divide the query's")
sdpa = ncnn_mp.Layer("SDPA")
fits("4 query heads, 2 key heads", sdpa, filled(8, 3, 4), filled(8, 5, 2), filled(8, 5, 2))
refused("2 query heads, 4 key heads", sdpa, filled(8, 3, 2), filled(8, 5, 4), filled(8, 5, 4))
refused("3 query heads, 2 key heads", sdpa, filled(8, 3, 3), filled(8, 5, 2), filled(8, 5, 2))

print("-- Slice: the slices fit along the axis")
slice_ = layer("Slice", {0: ints(3, 3)})
fits("8 values", slice_, filled(8), n_top=2)
refused("4 values", slice_, filled(4), n_top=2)

print("-- Embed: a table of num_output values per index")
check("a table of 20 for 10 indices of 4", lambda: layer("Embed", {0: 4, 1: 10, 3: 20}, filled(20)))
embed = layer("Embed", {0: 4, 1: 10, 3: 40}, filled(40))
fits("indices", embed, ncnn_mp.Mat(3, data=bytes(16)))

print("-- in a Net: extract refuses as a standalone forward does")
net = ncnn_mp.Net()
net.load_param_mem("7767517\n2 2\nInput in 0 1 in 0=8 1=3\nConvolution1D conv 1 1 in out 0=2 1=3 6=18\n")
net.load_model(bytes(4 + 18 * 4))  # (a float32 tag, then the weights)
with net.create_extractor() as ex:
    ex.input("in", filled(8, 4))
    check("4 channels into 3", lambda: ex.extract("out"))
with net.create_extractor() as ex:
    ex.input("in", filled(8, 3))
    print("3 channels", ex.extract("out").w)

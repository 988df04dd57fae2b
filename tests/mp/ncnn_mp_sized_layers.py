# SPDX-License-Identifier: MIT
# Spectrogram, InverseSpectrogram, Unfold and Fold size their output from their parameters and
# the input, which ncnn does not check against each other (found by the layer zoo under valgrind,
# issue 31, and by reading the others' sources): a Spectrogram whose row is shorter than its n_fft (center off) read a frame past
# the row, or made a Mat of a negative size (memalign of -316, then a write past a block); a
# reflected border as deep as the row read past it; an InverseSpectrogram read channel k of a
# vector past its end; an Unfold whose kernel is wider than its padded input read past it, as a
# convolution would; a Fold into an output narrower than its kernel wrote past it (one window by
# truncation), and read rows shorter than its windows past their end; a Pooling3D's tail pad
# from a stride of 2^30 wrapped its padded size (memalign of -18364), its SAME pads of mixed
# signs cropped and padded at once, a Pooling1D's window wider than its padded row took one
# window by truncation. The shape guard refuses each now, naming the layer, in a Net and
# standalone, and the layer works on afterwards.
import ncnn_mp
from mptest import check, require

require("NCNN_STRING")
for name in ("Spectrogram", "InverseSpectrogram", "Unfold", "Fold", "Pooling1D", "Pooling3D"):
    try:
        ncnn_mp.Layer(name)
    except ValueError:
        print("SKIP: this firmware's ncnn leaves out", name)
        raise SystemExit

opt = ncnn_mp.Option()
opt.num_threads = 1


def layer(name, **params):
    """A standalone layer, params by ncnn's keys (k0, k1, ...)."""
    lay = ncnn_mp.Layer(name)
    pd = ncnn_mp.ParamDict()
    for k, v in params.items():
        pd.set_float(int(k[1:]), v) if isinstance(v, float) else pd.set_int(int(k[1:]), v)
    lay.load_param(pd)
    return lay


def blob(*shape):
    m = ncnn_mp.Mat(*shape)
    m.fill(0.5)
    return m


def shape(m):
    return (m.dims, m.w, m.h, m.c)


print("-- Spectrogram (k0 n_fft, k1 power, k2 hoplen, k5 center, k6 pad_type)")
for label, params, x in (
        ("row of 1, n_fft 4, center off, hoplen 2^30", {"k0": 4, "k2": 1 << 30, "k5": 0}, blob(1)),
        ("row of 3, n_fft 8, center off", {"k0": 8, "k2": 1, "k5": 0}, blob(3)),
        ("row of 3, n_fft 8, reflected", {"k0": 8, "k2": 2, "k5": 1, "k6": 2}, blob(3)),
        ("row of 2^16, n_fft 8192, hoplen 1: 2^28 values or more", {"k0": 8192, "k2": 1, "k5": 0}, blob(1 << 16))):
    check(label, lambda: layer("Spectrogram", **params).forward(x, opt))
for label, params, x in (
        ("row of 16, n_fft 4, complex", {"k0": 4, "k2": 2, "k5": 0}, blob(16)),
        ("row of 3, n_fft 8, zero-padded", {"k0": 8, "k2": 2, "k5": 1, "k6": 0}, blob(3)),
        ("row of 5, n_fft 8, reflected", {"k0": 8, "k2": 2, "k5": 1, "k6": 2}, blob(5)),
        ("matrix 16x2, n_fft 4, power 2", {"k0": 4, "k1": 2, "k2": 4, "k5": 0}, blob(16, 2))):
    print(label, shape(layer("Spectrogram", **params).forward(x, opt)))

print("-- InverseSpectrogram (k0 n_fft, k1 returns, k2 hoplen, k5 center)")
for label, params, x in (
        ("a vector", {"k0": 4}, blob(8)),
        ("a matrix", {"k0": 4}, blob(2, 5)),
        ("rows of 1", {"k0": 4, "k5": 0}, blob(1, 5, 3)),
        ("2 channels for n_fft 8", {"k0": 8}, blob(2, 5, 2)),
        ("one frame, n_fft 4, centred: no output", {"k0": 4, "k5": 1}, blob(2, 1, 3))):
    check(label, lambda: layer("InverseSpectrogram", **params).forward(x, opt))
for label, params, x in (
        ("5 frames, one-sided 3 of n_fft 4", {"k0": 4, "k2": 1, "k5": 0}, blob(2, 5, 3)),
        ("5 frames, 4 of n_fft 4, real", {"k0": 4, "k1": 1, "k2": 2, "k5": 0}, blob(2, 5, 4))):
    print(label, shape(layer("InverseSpectrogram", **params).forward(x, opt)))

print("-- Unfold (k1 kernel, k3 stride, k4 pad)")
for label, params, x in (
        ("kernel 3 on 2x2", {"k1": 3}, blob(2, 2, 1)),
        ("kernel 2, dilation 4 on 4x4", {"k1": 2, "k2": 4}, blob(4, 4, 1)),
        ("a vector", {"k1": 2}, blob(8))):
    check(label, lambda: layer("Unfold", **params).forward(x, opt))
good = layer("Unfold", k1=2)
print("kernel 2 on 4x4x3", shape(good.forward(blob(4, 4, 3), opt)))
print("pads -1 (ncnn pads nothing)", shape(layer("Unfold", k1=2, k4=-1).forward(blob(4, 4, 1), opt)))
print("pads SAME", shape(layer("Unfold", k1=3, k3=2, k4=-233).forward(blob(5, 5, 1), opt)))

print("-- Fold (k1 kernel, k3 stride, k4 pad, k20 output_w)")
for label, params, x in (
        ("kernel 3 into 2x2", {"k1": 3, "k20": 2}, blob(9, 9)),
        ("kernel 2 into 4x4, rows of 5 (9 needed)", {"k1": 2, "k20": 4}, blob(5, 8)),
        ("kernel 2 into 4x4, 3 rows (4 needed)", {"k1": 2, "k20": 4}, blob(9, 3)),
        ("kernel 2 into 2^15 x 2^15", {"k1": 2, "k20": 1 << 15}, blob(9, 8))):
    check(label, lambda: layer("Fold", **params).forward(x, opt))
print("kernel 2 into 4x4, 8 rows of 9", shape(layer("Fold", k1=2, k20=4).forward(blob(9, 8), opt)))
print("kernel 2 stride 2 pad 1 into 4x4", shape(layer("Fold", k1=2, k3=2, k4=1, k20=4).forward(blob(9, 4), opt)))

print("-- Pooling1D and Pooling3D (k1 kernel, k11 its h, k2 stride, k3 pad, k5 pad_mode)")
for label, kind, params, x in (
        ("3D, stride 2^30 - 2^23, full padding", "Pooling3D", {"k1": 1, "k2": (1 << 30) - (1 << 23)}, blob(4, 4, 4, 1)),
        ("3D SAME, w padded by -1, h by 2", "Pooling3D", {"k1": 1, "k11": 3, "k2": 2, "k12": 1, "k5": 2}, blob(4, 4, 2, 1)),
        ("1D, window 5 on a row of 3", "Pooling1D", {"k1": 5, "k5": 1}, blob(3)),
        ("1D, pad -2", "Pooling1D", {"k1": 2, "k3": -2, "k5": 1}, blob(8))):
    check(label, lambda: layer(kind, **params).forward(x, opt))
print("3D 2x2x2 on 4x4x4", shape(layer("Pooling3D", k1=2, k2=2).forward(blob(4, 4, 4, 1), opt)))
print("3D SAME 3 on 5x5x5", shape(layer("Pooling3D", k1=3, k2=2, k5=2).forward(blob(5, 5, 5, 1), opt)))
print("1D window 3 pad 1 on 8", shape(layer("Pooling1D", k1=3, k3=1).forward(blob(8), opt)))

print("-- in a Net")
net = ncnn_mp.Net()
net.opt.num_threads = 1
net.load_param_mem("7767517\n3 3\nInput in 0 1 x\nSpectrogram sp 1 1 x s 0=8 2=2 5=0\nReLU r 1 1 x y\n")
net.load_model(b"")
with net.create_extractor() as ex:
    ex.input("x", blob(5))
    check("extract s", lambda: ex.extract("s"))
    print("then relu, same extractor:", ex.extract("y")[0])
with net.create_extractor() as ex:
    ex.input("x", blob(12))
    print("a row of 12:", shape(ex.extract("s")))
net.close()
print("done")

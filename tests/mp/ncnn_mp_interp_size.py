# SPDX-License-Identifier: MIT
# An Interp whose parameters give an output of no size (a negative or NaN scale, a negative
# output_width) made ncnn allocate an array of negative length: std::bad_array_new_length on
# the desktop, which ended the process (terminate, SIGABRT) from extract and from a standalone
# Layer.forward; a Mat of a wrapped size elsewhere. The shape guard refuses it now, naming the
# layer, in a Net and standalone; the Net, its Extractor and the layer work on afterwards.
# So is an output of 2^28 values or more (1 GiB of float32), which a board's ncnn, built
# without exceptions, could only end the program on (a 32-bit byte count wraps from 2^30
# values); the desktop's threw std::bad_array_new_length for one 2^30 - 1 wide (its count of
# coefficients, 3 ints a column, wrapped in int).
import ncnn_mp
from mptest import check, packed, require

require("NCNN_STRING")
try:
    ncnn_mp.Layer("Interp")
except ValueError:
    print("SKIP: this firmware's ncnn leaves out Interp")
    raise SystemExit

opt = ncnn_mp.Option()
opt.num_threads = 1


def image(w, h, c=1):
    m = ncnn_mp.Mat(w, h, c)
    m.fill(1.5)
    return m


def interp(**params):
    """A standalone bilinear Interp; params by ncnn's keys (1, 2: scales; 3, 4: output h, w)."""
    lay = ncnn_mp.Layer("Interp")
    pd = ncnn_mp.ParamDict()
    pd.set_int(0, 2)
    for k, v in params.items():
        key = int(k[1:])
        pd.set_float(key, v) if isinstance(v, float) else pd.set_int(key, v)
    lay.load_param(pd)
    return lay


def shape(m):
    return (m.dims, m.w, m.h, m.c)


print("-- standalone")
for label, params, x in (
        ("scales -2", {"k1": -2.0, "k2": -2.0}, image(4, 4)),
        ("scale w -0.5", {"k1": 2.0, "k2": -0.5}, image(4, 4, 2)),
        ("scale h nan", {"k1": float("nan"), "k2": 2.0}, image(4, 4)),
        ("scale 0.1 of 4 (0)", {"k1": 0.1, "k2": 0.1}, image(4, 4)),
        ("output -3x5", {"k3": 5, "k4": -3}, image(4, 4)),
        ("matrix, scale w -1", {"k2": -1.0}, image(4, 3, 1).reshape(4, 3)),
        ("vector, output 2x-2", {"k3": -2, "k4": 2}, ncnn_mp.Mat(3))):
    lay = interp(**params)
    check(label, lambda: lay.forward(x, opt))
print("-- outputs of 2^28 values or more")
for label, params, x in (
        ("output 16384x16384, 1 channel", {"k3": 16384, "k4": 16384}, image(4, 4)),
        ("output 8192x16384, 2 channels", {"k3": 16384, "k4": 8192}, image(4, 4, 2)),
        ("scales 4096 of 4x4", {"k1": 4096.0, "k2": 4096.0}, image(4, 4)),
        ("vector of 4 to 8192x8192 planes", {"k3": 8192, "k4": 8192}, ncnn_mp.Mat(4)),
        ("matrix of 3 rows, scale w 2^25", {"k2": 33554432.0}, image(4, 3, 1).reshape(4, 3)),
        # (a reference blob's size asked for, 5=3, and one input: ncnn's one-blob forward sizes by the
        # parameters; the guard took it for a reference it was not given: the layer zoo under valgrind)
        ("one input, 5=3, scales 2^16", {"k5": 3, "k1": 65536.0, "k2": 65536.0}, image(4, 4))):
    lay = interp(**params)
    check(label, lambda: lay.forward(x, opt))
print("matrix, scale h -1 (not resized along h):", shape(interp(k1=-1.0, k2=2.0).forward(image(4, 3, 1).reshape(4, 3), opt)))
print("scales 2:", shape(interp(k1=2.0, k2=2.0).forward(image(4, 4), opt)))

print("-- in a Net")
net = ncnn_mp.Net()
net.opt = opt
net.load_param(b"""7767517
5 7
Input data 0 1 data 0=4 1=4 2=1
Split split 1 3 data a b c
Interp up 1 1 a up 0=2 1=-2.0 2=-2.0
Interp wide 1 1 c wide 0=2 9="1073741823,1"
ReLU relu 1 1 b relu
""")
net.load_model(b"")
with net.create_extractor() as ex:
    ex.input("data", image(4, 4))
    check("extract up", lambda: ex.extract("up"))
    print("then relu, same extractor:", packed(ex.extract("relu"))[:3])
    check("extract up again", lambda: ex.extract("up"))
    check("extract wide (2^30 - 1 by its expression)", lambda: ex.extract("wide"))
print("done")

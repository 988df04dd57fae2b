# SPDX-License-Identifier: MIT
# The shape guard: a blob that does not fit a layer's weights is refused with a ValueError
# naming the layer before ncnn reads past the weights (a Convolution given more channels
# than it was made for, an InnerProduct given a bigger image, a Concat of misfitting
# blobs). Shapes that fit, packed or not, run as before; the Net lives on after a refusal.
import ncnn_mp
from mptest import require

require("NCNN_STRING")  # layer and blob names


def net_of(body, layers=None, packing=True):
    lines = [line for line in body.strip().split("\n")]
    blobs = set()
    for line in lines:
        f = line.split()
        n_in, n_out = int(f[2]), int(f[3])
        blobs.update(f[4:4 + n_in + n_out])
    net = ncnn_mp.Net()
    net.opt.num_threads = 1
    net.opt.use_packing_layout = packing
    for name, cls in (layers or {}).items():
        net.register_custom_layer(name, cls)
    net.load_param_mem("7767517\n%d %d\n%s\n" % (len(lines), len(blobs), "\n".join(lines)))
    net.load_model(ncnn_mp.DataReader(zeros=True))
    return net


def built(kind):
    """Whether this firmware's ncnn has the layer type (small MCU builds leave some out)."""
    try:
        ncnn_mp.Layer(kind)
        return True
    except ValueError:
        return False


def one_input(line, packing=True):
    """A net of input data and one layer taking it, named in line."""
    return net_of("Input data 0 1 data\n" + line, packing=packing)


def two_inputs(line):
    """A net of inputs a and b and one layer taking both, named in line."""
    return net_of("Input a 0 1 a\nInput b 0 1 b\n" + line)


def mat(*shape):
    m = ncnn_mp.Mat(*shape)
    m.fill(1.0)
    return m


def shape_of(m):
    return (m.w, m.h, m.c) if m.dims == 3 else (m.w, m.h) if m.dims == 2 else (m.w,)


def run(net, label, out="out", **inputs):
    try:
        with net.create_extractor() as ex:
            for name, m in inputs.items():
                ex.input(name, m)
            print(label, "->", shape_of(ex.extract(out)))
    except ValueError as e:
        print(label, "->", e)


print("Convolution, 3 channels in, 4 out, 3x3")
conv = one_input("Convolution conv 1 1 data out 0=4 1=3 6=108")
run(conv, "c=3", data=mat(8, 8, 3))
run(conv, "c=8", data=mat(8, 8, 8))
run(conv, "c=1", data=mat(8, 8, 1))
run(conv, "height and channels swapped (HWC)", data=mat(3, 8, 8))
run(conv, "smaller than the kernel", data=mat(2, 8, 3))
run(conv, "a vector", data=mat(27))
run(conv, "c=3 after the refusals", data=mat(8, 8, 3))

print("padding: a 5x5 kernel padded by 2 takes a 1x1 image")
padded = one_input("Convolution conv 1 1 data out 0=2 1=5 4=2 6=50")
run(padded, "1x1", data=mat(1, 1, 1))
run(padded, "a vector", data=mat(9))
same = one_input("Convolution conv 1 1 data out 0=2 1=5 4=-233 6=50")
run(same, "'same' padding, 2x2", data=mat(2, 2, 1))
run(same, "'same' padding, a vector", data=mat(3))
run(same, "'same' padding, 4 dims", data=mat(2, 2, 2, 1))
run(same, "'same' padding, 2x2 of dims 2", data=mat(2, 2))

print("a 1x1 Convolution takes a vector of its channels")
pointwise = one_input("Convolution conv 1 1 data out 0=2 1=1 6=12")
run(pointwise, "w=6 vector", data=mat(6))
run(pointwise, "w=7 vector", data=mat(7))

print("packed blobs count unpacked (16 channels, packed by 4 or 8 on this CPU)")
wide = one_input("Convolution conv 1 1 data out 0=8 1=1 6=64")
run(wide, "c=8", data=mat(4, 4, 8))
run(wide, "c=16", data=mat(4, 4, 16))
unpacked = one_input("Convolution conv 1 1 data out 0=8 1=1 6=64", packing=False)
run(unpacked, "c=16, no packing", data=mat(4, 4, 16))

print("Pooling: a 3x3 window (not padded) needs 3x3")
pool = one_input("Pooling pool 1 1 data out 1=3 5=1")
run(pool, "3x3", data=mat(3, 3, 2))
run(pool, "2x5", data=mat(2, 5, 2))
run(pool, "a vector of 9", data=mat(9))
for params, label in (("4=1", "global"), ("5=2", "'same' padding"), ("7=1 8=1", "adaptive"),
                      ("2=2", "stride 2 (ncnn pads the tail to a whole stride)"), ("2=2 5=1", "stride 2, valid")):
    run(one_input("Pooling pool 1 1 data out 1=3 " + params), label + ", 2x2", data=mat(2, 2, 2))

print("ConvolutionDepthWise, 4 groups of 1")
dw = one_input("ConvolutionDepthWise conv 1 1 data out 0=4 1=3 6=36 7=4")
run(dw, "c=4", data=mat(5, 5, 4))
run(dw, "c=6", data=mat(5, 5, 6))

if built("Deconvolution"):
    print("Deconvolution, 2 channels in")
    deconv = one_input("Deconvolution up 1 1 data out 0=3 1=2 3=2 6=24")
    run(deconv, "c=2", data=mat(3, 3, 2))
    run(deconv, "c=5", data=mat(3, 3, 5))

print("InnerProduct, 12 values in")
fc = one_input("InnerProduct fc 1 1 data out 0=3 2=36")
run(fc, "w=12", data=mat(12))
run(fc, "2x2x3 (12 values)", data=mat(2, 2, 3))
run(fc, "5 rows of 12", data=mat(12, 5))
run(fc, "w=16", data=mat(16))
run(fc, "4x4x3", data=mat(4, 4, 3))

print("a misfit found deep in the net: the image is too big for the InnerProduct")
deep = net_of("""
Input data 0 1 data
Convolution conv 1 1 data c 0=2 1=3 6=18
ReLU relu 1 1 c r
InnerProduct fc 1 1 r out 0=3 2=24
""")
run(deep, "4x4x1 (the conv makes 2x2x2)", data=mat(4, 4, 1))
run(deep, "6x6x1", data=mat(6, 6, 1))

print("one parameter per channel: BatchNorm, Scale, Bias, PReLU, InstanceNorm")
for body in ("BatchNorm bn 1 1 data out 0=3", "Scale sc 1 1 data out 0=3", "Bias b 1 1 data out 0=3",
             "PReLU p 1 1 data out 0=3", "InstanceNorm n 1 1 data out 0=3"):
    if built(body.split()[0]):
        n = one_input(body)
        print(" ", body.split()[0])
        run(n, "c=3", data=mat(2, 2, 3))
        run(n, "c=5", data=mat(2, 2, 5))
run(one_input("BatchNorm bn 1 1 data out 0=3"), "BatchNorm, a vector of 4", data=mat(4))
if built("PReLU"):
    run(one_input("PReLU p 1 1 data out 0=1"), "PReLU of one slope, c=5", data=mat(2, 2, 5))

print("Concat: the inputs match outside the axis")
for axis in (0, 1, -1):
    cat = two_inputs("Concat cat 2 1 a b out 0=%d" % axis)
    print("  axis", axis)
    run(cat, "4x4x2 + 4x4x3", a=mat(4, 4, 2), b=mat(4, 4, 3))
    run(cat, "4x4x2 + 4x5x2", a=mat(4, 4, 2), b=mat(4, 5, 2))
    run(cat, "4x4x2 + 5x4x2", a=mat(4, 4, 2), b=mat(5, 4, 2))
    run(cat, "4x4x2 + a vector", a=mat(4, 4, 2), b=mat(4))

print("Eltwise: the inputs have one shape")
add = two_inputs("Eltwise add 2 1 a b out 0=1")
run(add, "4x4x2 + 4x4x2", a=mat(4, 4, 2), b=mat(4, 4, 2))
run(add, "4x4x2 + 4x4x3", a=mat(4, 4, 2), b=mat(4, 4, 3))
run(add, "4x4x2 + 4x4x2 again", a=mat(4, 4, 2), b=mat(4, 4, 2))

print("BinaryOp: the inputs broadcast (each extent equal, or 1 in one of them)")
mul = two_inputs("BinaryOp mul 2 1 a b out 0=2")
run(mul, "4x4x2 * 4x4x2", a=mat(4, 4, 2), b=mat(4, 4, 2))
run(mul, "4x4x2 * 1x1x2", a=mat(4, 4, 2), b=mat(1, 1, 2))
run(mul, "4x4x2 * a vector of 2 (one per channel)", a=mat(4, 4, 2), b=mat(2))
run(mul, "4x4x2 * a vector of 4 (along w)", a=mat(4, 4, 2), b=mat(4))
run(mul, "4x4x2 * 4x2 (h, c)", a=mat(4, 4, 2), b=mat(4, 2))
run(mul, "4x4x2 * 4x4x3", a=mat(4, 4, 2), b=mat(4, 4, 3))
run(mul, "4x4x2 * 5x4x2", a=mat(4, 4, 2), b=mat(5, 4, 2))
run(mul, "4x4x2 * a vector of 3", a=mat(4, 4, 2), b=mat(3))
run(mul, "a vector of 3 * 4x4x2", a=mat(3), b=mat(4, 4, 2))
run(mul, "6 * 4", a=mat(6), b=mat(4))
run(mul, "4x4x2 * 4x4x2 again", a=mat(4, 4, 2), b=mat(4, 4, 2))


class MyConv(ncnn_mp.Layer):  # a Python layer in place of a built-in one: not guarded
    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, opt):
        return mat(1, 1, bottom.c)


print("a Python layer registered as Convolution sees every shape")
mine = net_of("""
Input data 0 1 data
Convolution conv 1 1 data out 0=4 1=3 6=108
""", {"Convolution": MyConv})
run(mine, "c=8", data=mat(8, 8, 8))
print("layers", [(d["name"], d["type"]) for d in conv.layers()])

# SPDX-License-Identifier: MIT
# A camera frame straight to a model's int8 input (Mat.from_pixels_int8, Net.input_int8_scale,
# docs/usage.md#camera-frames-to-int8): for every frame format, with and without mean and norm,
# the int8 Mat made from the frame gives the net exactly the outputs the float path gives
# (from_pixels_resize, substract_mean_normalize, the int8 layer quantizing it), and a third of
# its bytes. Every mistake (a wrong scale, a net that reads the input as float, readers with
# two scales, an int8 Mat given new storage) is a ValueError, and the Extractor still works.
import struct

import ncnn_mp
from mptest import check, require, require_mat_helpers

require("NCNN_STRING", "NCNN_INT8")
if not hasattr(ncnn_mp.Mat, "from_pixels_int8"):
    print("SKIP: built without NCNN_MP_HAS_CAMERA")
    raise SystemExit
require_mat_helpers()

SCALE = 37.25  # the first layer's input scale: not a power of two
seed = 5


def rand(n):
    global seed
    seed = (seed * 75 + 74) % 65537
    return seed % n


def conv_weights(cin, cout, k, bottom):
    """A k x k int8 Convolution with a bias: int8 weights, the bias, weight scales, the input scale."""
    vals = bytes((rand(255) - 127) & 0xFF for _ in range(cin * cout * k * k))
    out = struct.pack("<I", 0x000D4B38) + vals + bytes((4 - len(vals) % 4) % 4)
    out += struct.pack("<%df" % cout, *[(rand(200) - 100) / 10 for _ in range(cout)])
    out += struct.pack("<%df" % cout, *[60.0 + rand(80) for _ in range(cout)])
    return out + struct.pack("<f", bottom)


def net_of(lines, weights):
    net = ncnn_mp.Net()
    net.opt.num_threads = 1
    names = set()
    for line in lines:
        parts = line.split()
        names.update(parts[4:4 + int(parts[2]) + int(parts[3])])
    net.load_param_mem("7767517\n%d %d\n%s\n" % (len(lines), len(names), "\n".join(lines)))
    net.load_model(weights)
    return net


def int8_net(cin, scales=(SCALE,)):
    """Input -> a padded 3x3 int8 Convolution (float out); with two scales, a Split feeding two."""
    if len(scales) == 1:
        lines = ["Input data 0 1 data", "Convolution conv0 1 1 data out 0=4 1=3 4=1 5=1 6=%d 8=2" % (cin * 36)]
        return net_of(lines, conv_weights(cin, 4, 3, scales[0]))
    lines = ["Input data 0 1 data", "Split sp 1 2 data d0 d1",
             "Convolution conv0 1 1 d0 out 0=4 1=3 4=1 5=1 6=%d 8=2" % (cin * 36),
             "Convolution conv1 1 1 d1 out1 0=4 1=3 4=1 5=1 6=%d 8=2" % (cin * 36)]
    return net_of(lines, conv_weights(cin, 4, 3, scales[0]) + conv_weights(cin, 4, 3, scales[1]))


def run_bare(net, mat):
    with net.create_extractor() as ex:
        ex.input("data", mat)
        return ex.extract("data").to_bytes()


def run(net, mat):
    with net.create_extractor() as ex:
        ex.input("data", mat)
        return ex.extract("out").to_bytes()


P = ncnn_mp.Mat
W, H, TW, TH = 14, 10, 9, 7
FORMATS = [("RGB565", P.PIXEL_RGB565, 2, 3), ("RGB565_BE|BGR", P.PIXEL_RGB565_BE | P.PIXEL_BGR << 16, 2, 3),
           ("YUYV", P.PIXEL_YUYV, 2, 3), ("NV12", P.PIXEL_NV12, 1, 3), ("NV21|GRAY", P.PIXEL_NV21 | P.PIXEL_GRAY << 16, 1, 1),
           ("RGB", P.PIXEL_RGB, 3, 3), ("BGR2RGB", P.PIXEL_BGR2RGB, 3, 3), ("GRAY", P.PIXEL_GRAY, 1, 1),
           ("RGBA2BGR", P.PIXEL_RGBA2BGR, 4, 3)]
nets = {c: int8_net(c) for c in (1, 3)}
for c in (1, 3):
    print("input_int8_scale", c, nets[c].input_int8_scale("data"), nets[c].input_int8_scale(0))

for name, ptype, bpp, c in FORMATS:
    rows = H * 3 // 2 if name.startswith("NV") else H
    frame = bytes(rand(256) for _ in range(W * bpp * rows))
    # (ncnn's own from_pixels_resize, which the plain formats get where ncnn has pixel code,
    # rounds its resize to 8 bits; from_pixels_int8 and the camera path keep the fractions:
    # the plain formats are compared at the frame's own size, where neither rounds)
    tw, th = (W, H) if ptype & 0xFFFF < 16 else (TW, TH)
    same = 0
    for mean, norm in ((None, None), ([127.5] * c, None), (None, [1 / 64] * c),
                       ([104.0, 117.0, 123.0][:c], [0.017, 0.0175, 0.0171][:c])):
        q = P.from_pixels_int8(frame, ptype, W, H, tw, th, SCALE, mean, norm)
        f = P.from_pixels_resize(frame, ptype, W, H, tw, th)
        if mean is not None or norm is not None:
            f.substract_mean_normalize(mean, norm)
        assert (q.w, q.h, q.c, q.elemsize) == (tw, th, c, 1), q
        assert len(q.to_bytes()) * 4 == len(f.to_bytes())
        same += run(nets[c], q) == run(nets[c], f)
    print(name, "outputs equal to the float path:", same, "of 4")

# The same frame at its own size (no resize) and with a stride; into an Allocator's storage.
frame = bytes(rand(256) for _ in range(16 * 3 * 5))
alloc = ncnn_mp.Allocator()
q = P.from_pixels_int8(frame, P.PIXEL_RGB, 5, 5, 5, 5, SCALE, None, [0.25] * 3, 48, alloc)
f = P.from_pixels_resize(frame, P.PIXEL_RGB, 5, 5, 5, 5, 48)
f.substract_mean_normalize(None, [0.25] * 3)
print("stride, no resize:", run(nets[3], q) == run(nets[3], f))

# The mistakes.
frame = bytes(W * H * 2)
ok = P.from_pixels_int8(frame, P.PIXEL_RGB565, W, H, TW, TH, SCALE)
check("scale 0", lambda: P.from_pixels_int8(frame, P.PIXEL_RGB565, W, H, TW, TH, 0.0))
check("scale nan", lambda: P.from_pixels_int8(frame, P.PIXEL_RGB565, W, H, TW, TH, float("nan")))
check("scale inf", lambda: P.from_pixels_int8(frame, P.PIXEL_RGB565, W, H, TW, TH, float("inf")))
check("scale str", lambda: P.from_pixels_int8(frame, P.PIXEL_RGB565, W, H, TW, TH, "1"))
check("mean short", lambda: P.from_pixels_int8(frame, P.PIXEL_RGB565, W, H, TW, TH, SCALE, [1.0, 2.0]))
check("norm type", lambda: P.from_pixels_int8(frame, P.PIXEL_RGB565, W, H, TW, TH, SCALE, None, "abc"))
check("frame short", lambda: P.from_pixels_int8(frame[:-1], P.PIXEL_RGB565, W, H, TW, TH, SCALE))
check("bad type", lambda: P.from_pixels_int8(frame, 0x7777, W, H, TW, TH, SCALE))
check("target 0", lambda: P.from_pixels_int8(frame, P.PIXEL_RGB565, W, H, 0, TH, SCALE))

float_net = net_of(["Input data 0 1 data", "Convolution conv0 1 1 data out 0=2 1=1 6=6"], bytes(4) + bytes(6 * 4))
print("float net's scale:", float_net.input_int8_scale("data"))
check("int8 into a float net", lambda: run(float_net, ok))
check("wrong scale", lambda: run(nets[3], P.from_pixels_int8(frame, P.PIXEL_RGB565, W, H, TW, TH, SCALE * 2)))
print("a scale within 1e-5:", len(run(nets[3], P.from_pixels_int8(frame, P.PIXEL_RGB565, W, H, TW, TH, SCALE * 1.000001))))
two = int8_net(3, (SCALE, SCALE / 2))
check("two scales", lambda: two.input_int8_scale("data"))
check("two scales input", lambda: run(two, ok))
print("two readers, one scale:", int8_net(3, (SCALE, SCALE)).input_int8_scale("data"))
bare = net_of(["Input data 0 1 data"], b"")
print("a blob nothing reads:", bare.input_int8_scale("data"))
check("int8 into a blob nothing reads", lambda: run_bare(bare, ok))
check("no such blob", lambda: nets[3].input_int8_scale("nothing"))
check("no such index", lambda: nets[3].input_int8_scale(99))
check("blob type", lambda: nets[3].input_int8_scale(1.5))
check("before load_model", lambda: ncnn_mp.Net().input_int8_scale("data"))

# An int8 Mat of unknown scale (made by hand) goes in as it is.
hand = P(TW, TH, 3, elemsize=1)
view = memoryview(hand)
for i in range(len(view)):
    view[i] = 3
print("int8 Mat by hand:", len(run(nets[3], hand)))

# A float input given int8 storage after input(): before the first extract ncnn holds the
# float storage itself (the extract computes from it); from the second on the extract hands
# the Mat over again and refuses it. The Extractor still works once it has a float Mat again.
f = P(TW, TH, 3)
f.fill(0.5)
ex = float_net.create_extractor()
ex.input("data", f)
first = ex.extract("out").to_bytes()
f.create(TW, TH, 3, elemsize=1)
check("int8 after input()", lambda: ex.extract("out"))
g = P(TW, TH, 3)
g.fill(0.5)
ex.input("data", g)
print("then:", ex.extract("out").to_bytes() == first)
ex.close()

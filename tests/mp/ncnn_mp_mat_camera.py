# SPDX-License-Identifier: MIT
# Camera frames and screens: from_pixels, from_pixels_resize and to_pixels for RGB565 (both
# byte orders), YUYV, NV12 and NV21 into RGB, BGR and GRAY Mats and back, the plain formats
# through the same path where ncnn has no pixel code (the boards), and every bad argument.
# Each result prints as a digest of its bytes: the boards must give the same bits as the Unix
# port. tests/test_camera.py runs this script with a path, where it also writes every input
# and result, and checks them against numpy.
import gc
import struct
import sys

import ncnn_mp
from mptest import check, require

require("NCNN_MP_HAS_CAMERA")

Mat = ncnn_mp.Mat
W, H = 6, 4
CAMERA = [("RGB565", Mat.PIXEL_RGB565), ("RGB565_BE", Mat.PIXEL_RGB565_BE), ("YUYV", Mat.PIXEL_YUYV),
          ("NV12", Mat.PIXEL_NV12), ("NV21", Mat.PIXEL_NV21)]
ORDERS = [("", 0), ("RGB", Mat.PIXEL_RGB), ("BGR", Mat.PIXEL_BGR), ("GRAY", Mat.PIXEL_GRAY),
          ("RGBA", Mat.PIXEL_RGBA)]
BPP = {"RGB565": 2, "RGB565_BE": 2, "YUYV": 2, "NV12": 1, "NV21": 1}

seed = [1]


def noise(n):
    """n pseudo-random bytes (the ZX81's generator: small ints on every board)."""
    out = bytearray(n)
    x = seed[0]
    for i in range(n):
        x = (x * 75 + 74) % 65537
        out[i] = x & 255
    seed[0] = x
    return bytes(out)


def digest(data):
    h = 0
    for b in data:
        h = (h * 31 + b) % 1000003
    return h


dump = sys.argv[1] if len(sys.argv) > 1 else None
cases = []


def record(label, kind, t, w, h, size, stride, data, out, result):
    """Print the result's digest; keep the case for the dump."""
    raw = result.to_bytes() if isinstance(result, Mat) else bytes(result)
    shape = (result.w, result.h, result.c) if isinstance(result, Mat) else (len(raw),)
    print(label, *shape, digest(raw))
    if dump:
        cases.append([label, kind, t, w, h, size, stride, data.hex(), raw.hex()])


# Frames in: packed rows, and rows 3 bytes longer than the pixels (noise in the gap).
for name, fmt in CAMERA:
    for pad in (0, 3):
        stride = W * BPP[name] + pad
        rows = H * 3 // 2 if name.startswith("NV") else H
        frame = noise(stride * rows)
        for oname, order in ORDERS:
            t = fmt | order << 16
            label = "%s%s stride %d" % (name, "->" + oname if oname else "", stride)
            record("from " + label, "from", t, W, H, None, stride,
                   frame, None, Mat.from_pixels(frame, t, W, H, stride if pad else 0))
            for tw, th in ((4, 3), (9, 7), (1, 1)):
                record("resize %dx%d %s" % (tw, th, label), "resize", t, W, H, (tw, th), stride,
                       frame, None, Mat.from_pixels_resize(frame, t, W, H, tw, th, stride if pad else 0))


def float_mat(c):
    """A W x H x c Mat of values in quarters from -20 to 280 (exact in float32 everywhere)."""
    values = [(b * 5 % 1200) * 0.25 - 20 for b in noise(W * H * c)]
    m = Mat(W, H, c)
    m.from_bytes(struct.pack("<%df" % len(values), *values))
    return m


# Frames out: from RGB, BGR and GRAY Mats (values outside 0..255 and with fractions).
for name, fmt in CAMERA:
    for oname, order in ORDERS:
        t = fmt | order << 16
        m = float_mat(1 if oname == "GRAY" else 4 if oname == "RGBA" else 3)
        for pad in (0, 2):
            stride = W * BPP[name] + pad
            label = "to %s%s stride %d" % (name, "<-" + oname if oname else "", stride)
            if pad:
                rows = H * 3 // 2 if name.startswith("NV") else H
                out = bytearray(noise(stride * rows))  # the gaps keep what they held
                returned = m.to_pixels(t, out, stride)
                print(label, "returned its buffer", returned is out)
            else:
                out = m.to_pixels(t)
            record(label, "to", t, W, H, None, stride, m.to_bytes(), None, out)

# A frame round trip: RGB565 in either byte order unpacks and packs back to the same bytes.
frame = noise(W * H * 2)
for name, fmt in CAMERA[:2]:
    back = Mat.from_pixels(frame, fmt, W, H).to_pixels(fmt)
    print(name, "round trip", bytes(back) == frame)

# The plain 8-bit formats: ncnn's code where ncnn has it, this path on the boards; the same
# results (ncnn's conversions, ncnn's luma and ncnn's truncation).
rgba = noise(W * H * 4)
PLAIN = [("RGB", Mat.PIXEL_RGB, 3), ("BGR", Mat.PIXEL_BGR, 3), ("GRAY", Mat.PIXEL_GRAY, 1),
         ("RGBA", Mat.PIXEL_RGBA, 4), ("BGRA", Mat.PIXEL_BGRA, 4), ("RGB2BGR", Mat.PIXEL_RGB2BGR, 3),
         ("RGB2GRAY", Mat.PIXEL_RGB2GRAY, 3), ("BGR2GRAY", Mat.PIXEL_BGR2GRAY, 3),
         ("RGBA2RGB", Mat.PIXEL_RGBA2RGB, 4), ("RGBA2GRAY", Mat.PIXEL_RGBA2GRAY, 4),
         ("BGRA2RGB", Mat.PIXEL_BGRA2RGB, 4), ("GRAY2RGB", Mat.PIXEL_GRAY2RGB, 1),
         ("GRAY2BGR", Mat.PIXEL_GRAY2BGR, 1)]
for name, t, bpp in PLAIN:
    m = Mat.from_pixels(rgba[:W * H * bpp], t, W, H)
    print("plain from", name, m.w, m.h, m.c, digest(m.to_bytes()))
for name, t, c in [("RGB", Mat.PIXEL_RGB, 3), ("GRAY", Mat.PIXEL_GRAY, 1), ("RGBA", Mat.PIXEL_RGBA, 4),
                   ("RGB2BGR", Mat.PIXEL_RGB2BGR, 3), ("RGB2RGBA", Mat.PIXEL_RGB2RGBA, 3),
                   ("BGR2RGBA", Mat.PIXEL_BGR2RGBA, 3), ("GRAY2RGBA", Mat.PIXEL_GRAY2RGBA, 1),
                   ("RGBA2BGRA", Mat.PIXEL_RGBA2BGRA, 4)]:
    print("plain to", name, digest(float_mat(c).to_pixels(t)))
# A plain resize: ncnn's (8-bit, rounded) where ncnn has it, this path's elsewhere; against this
# path's own (NV12 with neutral chroma is the gray image itself), within 1.
gray = noise(W * H)
nv12 = gray + bytes([128]) * (W * H // 2)
a = Mat.from_pixels_resize(gray, Mat.PIXEL_GRAY, W, H, 9, 7).to_bytes()
b = Mat.from_pixels_resize(nv12, Mat.PIXEL_NV12 | Mat.PIXEL_GRAY << 16, W, H, 9, 7).to_bytes()
a, b = struct.unpack("<63f", a), struct.unpack("<63f", b)
print("plain resize within 1 of this path's:", max(abs(x - y) for x, y in zip(a, b)) <= 1)

# Detections drawn into a frame with framebuf (ncnn_mp_lib/screen.py), in either byte order: the
# same picture once unpacked, the box's colour where the box is, the label's ink in its box.
from ncnn_mp_lib.screen import draw_detections, rgb565

pictures = []
photo = Mat.from_pixels(noise(40 * 24 * 3), Mat.PIXEL_RGB, 40, 24)
for fmt in (Mat.PIXEL_RGB565, Mat.PIXEL_RGB565_BE):
    screen = photo.to_pixels(fmt)
    draw_detections(screen, 40, 24, [(3, 12, 33, 23, "cup", rgb565(0, 255, 0))], fmt == Mat.PIXEL_RGB565_BE)
    pictures.append(bytes(Mat.from_pixels(screen, fmt, 40, 24).to_pixels(Mat.PIXEL_RGB)))
shown = pictures[0]
print("framebuf: both byte orders drawn alike", pictures[0] == pictures[1], digest(shown))
ink = sum(1 for y in range(3, 11) for x in range(5, 29) if shown[(y * 40 + x) * 3:][:3] == b"\0\0\0")
print("box corner", list(shown[(22 * 40 + 3) * 3:][:3]), "label", list(shown[(2 * 40 + 3) * 3:][:3]), "ink", ink)

# Every mistake, with a camera format (the plain ones have ncnn_mp_mat_pixels.py's).
frame = noise(W * H * 2)
nv = noise(W * H * 3 // 2)
m = float_mat(3)
RGB565, YUYV, NV12 = Mat.PIXEL_RGB565, Mat.PIXEL_YUYV, Mat.PIXEL_NV12
check("unknown format", lambda: Mat.from_pixels(frame, 21, W, H))
check("unknown Mat order", lambda: Mat.from_pixels(frame, RGB565 | 6 << 16, W, H))
check("a camera format as the Mat order", lambda: Mat.from_pixels(frame, RGB565 | YUYV << 16, W, H))
check("type not an int", lambda: Mat.from_pixels(frame, "RGB565", W, H))
check("frame too small", lambda: Mat.from_pixels(frame[:-1], RGB565, W, H))
check("NV12 frame without its chroma", lambda: Mat.from_pixels(nv[:W * H], NV12, W, H))
check("stride too short", lambda: Mat.from_pixels(frame, RGB565, W, H, W * 2 - 1))
check("stride past the frame", lambda: Mat.from_pixels(frame, RGB565, W, H, W * 2 + 1))
check("negative stride", lambda: Mat.from_pixels(frame, RGB565, W, H, -2))
check("YUYV odd width", lambda: Mat.from_pixels(frame, YUYV, 5, H))
check("NV12 odd width", lambda: Mat.from_pixels(nv, NV12, 5, H))
check("NV21 odd height", lambda: Mat.from_pixels(nv, Mat.PIXEL_NV21, W, 3))
check("zero width", lambda: Mat.from_pixels(frame, RGB565, 0, H))
check("negative height", lambda: Mat.from_pixels(frame, RGB565, W, -1))
check("not a buffer", lambda: Mat.from_pixels(None, RGB565, W, H))
check("resize to 0", lambda: Mat.from_pixels_resize(frame, RGB565, W, H, 0, 3))
check("resize too large", lambda: Mat.from_pixels_resize(frame, YUYV, W, H, 32768, 32768))
check("bad allocator", lambda: Mat.from_pixels(frame, RGB565, W, H, 0, 5))
check("to_pixels into bytes", lambda: m.to_pixels(RGB565, bytes(W * H * 2)))
check("to_pixels buffer too small", lambda: m.to_pixels(RGB565, bytearray(W * H * 2 - 1)))
check("to_pixels stride too short", lambda: m.to_pixels(RGB565, bytearray(100), 11))
check("to_pixels GRAY order from 3 channels", lambda: m.to_pixels(RGB565 | Mat.PIXEL_GRAY << 16))
check("to_pixels of an empty Mat", lambda: Mat().to_pixels(YUYV))
check("to_pixels int8 Mat", lambda: Mat(W, H, 3, elemsize=1).to_pixels(RGB565))
odd = Mat(5, 3, 3)
check("to_pixels YUYV odd width", lambda: odd.to_pixels(YUYV))
check("to_pixels NV12 odd height", lambda: Mat(4, 3, 3).to_pixels(NV12))
check("to_pixels too many arguments", lambda: m.to_pixels(RGB565, None, 0, 1))

# The mistakes leave nothing behind: rounds of all of them, and the Python heap stays where it was.
def mistakes():
    for f in (lambda: Mat.from_pixels(frame[:-1], RGB565, W, H),
              lambda: Mat.from_pixels(frame, YUYV, 5, H),
              lambda: Mat.from_pixels_resize(frame, RGB565, W, H, 0, 3),
              lambda: m.to_pixels(RGB565, bytearray(3)),
              lambda: odd.to_pixels(YUYV)):
        try:
            f()
        except (ValueError, TypeError):
            pass


# (Measured after 50 rounds, not from the start: the conservative collector may keep a few
# blocks of the last round alive from stale stack words. A leak of one 16-byte block a mistake
# would grow the heap by 16,000 bytes over the next 200 rounds.)
for _ in range(50):
    mistakes()
gc.collect()
before = gc.mem_alloc()
for _ in range(200):
    mistakes()
gc.collect()
print("the heap after 1,000 more mistakes as before:", gc.mem_alloc() - before <= 1024)
print("healthy", digest(Mat.from_pixels(frame, RGB565, W, H).to_bytes()))

if dump:
    import json
    with open(dump, "w") as f:
        json.dump(cases, f)

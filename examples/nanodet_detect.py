# SPDX-License-Identifier: MIT
"""Objects in a photo with NanoDet-m: boxes with COCO labels and scores.

    MICROPYPATH=.frozen:. micropython examples/nanodet_detect.py photo.ppm [models folder] [input side] [objects.png]

The photo is a binary PPM (examples/squeezenet_classify.py reads it); the models folder holds
nanodet_m.param/.bin (default: `make models NAMES=nanodet`'s folder). The photo is letterboxed as the model
expects (ncnn_mp_lib/nanodet.py): its longer side resized to `input side` pixels (default 320),
padded with zeros to multiples of 32, BGR, normalised with the training's mean and scale.
The objects found are printed in the photo's pixels; with a fourth argument they are also
drawn on the photo (ncnn's drawing functions: a box and a label per object) and written
there as a PNG (ncnn_mp_lib/png.py).
"""

import sys

try:
    from typing import Any
except ImportError:  # MicroPython: the annotations are strings it never reads
    pass

import ncnn_mp
from ncnn_mp_lib import nanodet
from ncnn_mp_lib.png import write_png
from squeezenet_classify import fetched, read_ppm

# ncnn's colours are 0xAABBGGRR; one per class, cycling.
COLOURS = (0x0000FF00, 0x00FF8000, 0x000080FF, 0x00FF00FF, 0x0000FFFF, 0x00FFFF00)
BLACK = 0x00000000


def network_input(w: int, h: int, rgb: bytes, side: int) -> "tuple[ncnn_mp.Mat, tuple[int, int, float]]":
    """The letterboxed, normalised input Mat, and (px, py, scale) to map boxes back."""
    rw, rh, px, py, scale = nanodet.letterbox(w, h, side)
    x = ncnn_mp.Mat.from_pixels_resize(rgb, ncnn_mp.Mat.PIXEL_RGB2BGR, w, h, rw, rh)
    pw, ph = (rw + 31) // 32 * 32 - rw, (rh + 31) // 32 * 32 - rh
    x = x.copy_make_border(py, ph - py, px, pw - px, ncnn_mp.Mat.BORDER_CONSTANT, 0.0, ncnn_mp.Option())
    x.substract_mean_normalize(nanodet.MEAN, nanodet.NORM)
    return x, (px, py, scale)


def outputs(net: "ncnn_mp.Net", x: "ncnn_mp.Mat") -> "tuple[dict[int, Any], list[ncnn_mp.Mat]]":
    """{stride: (grid_w, cells, cls, dis)} for nanodet.detect, and the Mats the memoryviews
    point into (a memoryview does not keep its Mat alive: keep these until decoded)."""
    found = {}
    mats = []
    with net.create_extractor() as ex:
        ex.input(nanodet.INPUT, x)
        for stride in nanodet.STRIDES:
            cls, dis = (ex.extract(name) for name in nanodet.OUTPUTS[stride])
            mats += [cls, dis]
            found[stride] = (x.w // stride, cls.h, memoryview(cls), memoryview(dis))
    return found, mats


def detect(net: "ncnn_mp.Net", w: int, h: int, rgb: bytes, side: int, fast: bool = True) -> "list[nanodet.Object]":
    """The objects in the photo, in its own pixels, best first."""
    x, (px, py, scale) = network_input(w, h, rgb, side)
    found, mats = outputs(net, x)
    objects = nanodet.detect(found, fast=fast)
    mats.clear()
    return nanodet.to_photo(objects, w, h, px, py, scale)


def draw(w: int, h: int, rgb: bytes, objects: "list[nanodet.Object]") -> bytearray:
    """A copy of the photo with each object's box and label drawn on it: the label above
    the box, else inside it at the top, else at the bottom, wherever no label is yet."""
    pixels = bytearray(rgb)
    size = max(6, min(w, h) // 50)  # ncnn's glyphs: `size` pixels wide, twice that high
    placed: "list[tuple[int, int, int, int]]" = []
    for o in objects:
        colour = COLOURS[o[5] % len(COLOURS)]
        x0, y0, y1 = int(o[1]), int(o[2]), int(o[4])
        ncnn_mp.Mat.draw_rectangle(pixels, w, h, 3, x0, y0, int(o[3]) - x0, y1 - y0, colour, 2)
        text = "%s %d%%" % (nanodet.LABELS[o[5]], int(o[0] * 100 + 0.5))
        lw, lh = len(text) * size + 4, 2 * size + 2
        spots = [(x0, y) for y in (y0 - lh, y0, y1 - lh) if 0 <= y <= h - lh]
        free = [(x, y) for x, y in spots if all(x + lw <= a or a + c <= x or y + lh <= b or b + d <= y
                                                for a, b, c, d in placed)]
        x, y = (free or spots or [(x0, max(0, y0))])[0]
        placed.append((x, y, lw, lh))
        ncnn_mp.Mat.draw_rectangle(pixels, w, h, 3, x, y, lw, lh, colour, -1)
        ncnn_mp.Mat.draw_text(pixels, w, h, 3, text, x + 2, y + 1, size, BLACK)
    return pixels


def main(argv: "list[str]") -> None:
    folder = argv[2] if len(argv) > 2 else fetched("nanodet")
    side = int(argv[3]) if len(argv) > 3 else 320
    net = ncnn_mp.Net()
    net.load_param(folder + "/nanodet_m.param")
    net.load_model(folder + "/nanodet_m.bin")
    w, h, rgb = read_ppm(argv[1])
    objects = detect(net, w, h, rgb, side)
    for o in objects:
        print("%.4f box %.1f %.1f %.1f %.1f class %d %s" % (o[0], o[1], o[2], o[3], o[4], o[5], nanodet.LABELS[o[5]]))
    if len(argv) > 4:
        write_png(argv[4], w, h, draw(w, h, rgb, objects))


if __name__ == "__main__":
    main(sys.argv)

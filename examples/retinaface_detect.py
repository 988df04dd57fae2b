# SPDX-License-Identifier: MIT
"""Faces in a photo with RetinaFace MobileNet-0.25: boxes, scores and five landmarks.

    MICROPYPATH=.frozen:. micropython examples/retinaface_detect.py photo.ppm [models folder] [input side] [faces.png]

The photo is a binary PPM (examples/squeezenet_classify.py reads it); the models folder holds
mnet.25-opt.param/.bin (default: `make models NAMES=retinaface`'s folder). The photo is resized to a square of
`input side` pixels (default 320; the network takes any size), fed as RGB without
normalisation, and the faces found (ncnn_mp_lib/retinaface.py) are printed in the photo's pixels;
with a fourth argument they are also drawn on the photo (ncnn's drawing functions: boxes in
green, landmarks in red) and written there as a PNG (ncnn_mp_lib/png.py).
"""

import sys

try:
    from typing import Any
except ImportError:  # MicroPython: the annotations are strings it never reads
    pass

import ncnn_mp
from ncnn_mp_lib import retinaface
from ncnn_mp_lib.png import write_png
from squeezenet_classify import fetched, read_ppm

GREEN, RED = 0x0000FF00, 0x000000FF  # ncnn's colours: 0xAABBGGRR


def draw(w: int, h: int, rgb: bytes, faces: "list[retinaface.Face]") -> bytearray:
    """A copy of the photo with each face's box and landmarks drawn on it."""
    pixels = bytearray(rgb)
    for f in faces:
        x0, y0 = int(f[1]), int(f[2])
        ncnn_mp.Mat.draw_rectangle(pixels, w, h, 3, x0, y0, int(f[3]) - x0, int(f[4]) - y0, GREEN, 3)
        for px, py in f[5]:
            ncnn_mp.Mat.draw_circle(pixels, w, h, 3, int(px), int(py), 3, RED, -1)
    return pixels


def outputs(net: "ncnn_mp.Net", x: "ncnn_mp.Mat") -> "tuple[dict[int, Any], list[ncnn_mp.Mat]]":
    """{stride: (w, h, step, cls, bbox, landmark)} for retinaface.detect, and the Mats the
    memoryviews point into (a memoryview does not keep its Mat alive: keep these until decoded)."""
    found = {}
    mats = []
    with net.create_extractor() as ex:
        ex.input("data", x)
        for stride in retinaface.STRIDES:
            cls, bbox, landmark = (ex.extract(name) for name in retinaface.output_names(stride))
            mats += [cls, bbox, landmark]
            found[stride] = (cls.w, cls.h, cls.cstep, memoryview(cls), memoryview(bbox), memoryview(landmark))
    return found, mats


def detect(net: "ncnn_mp.Net", w: int, h: int, rgb: bytes, side: int) -> "list[retinaface.Face]":
    """The faces in the photo, in its own pixels, best first."""
    x = ncnn_mp.Mat.from_pixels_resize(rgb, ncnn_mp.Mat.PIXEL_RGB, w, h, side, side)
    found, mats = outputs(net, x)
    faces = retinaface.detect(found)
    mats.clear()
    sx, sy = w / side, h / side
    return [(f[0], f[1] * sx, f[2] * sy, f[3] * sx, f[4] * sy, [(px * sx, py * sy) for px, py in f[5]])
            for f in faces]


def main(argv: "list[str]") -> None:
    folder = argv[2] if len(argv) > 2 else fetched("retinaface")
    side = int(argv[3]) if len(argv) > 3 else 320
    net = ncnn_mp.Net()
    net.load_param(folder + "/mnet.25-opt.param")
    net.load_model(folder + "/mnet.25-opt.bin")
    w, h, rgb = read_ppm(argv[1])
    faces = detect(net, w, h, rgb, side)
    for f in faces:
        points = " ".join("%.1f,%.1f" % p for p in f[5])
        print("face %.4f box %.1f %.1f %.1f %.1f landmarks %s" % (f[0], f[1], f[2], f[3], f[4], points))
    if len(argv) > 4:
        write_png(argv[4], w, h, draw(w, h, rgb, faces))


if __name__ == "__main__":
    main(sys.argv)

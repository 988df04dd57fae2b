# SPDX-License-Identifier: MIT
"""A camera's frame through NanoDet-m: RGB565 in, objects out, drawn into the frame.

    micropython examples/camera_detect.py photo.ppm [models folder] [objects.png] [le]

What a board with a camera and a screen does, on a photo: the photo (a binary PPM, e.g.
`make photos`) becomes the RGB565 frame a camera driver hands over (high byte first, as ESP32
drivers and SPI LCDs use it; `le` at the end: low byte first, framebuf's own order), with
ncnn_mp's to_pixels. The detector reads the frame with from_pixels_resize(PIXEL_RGB565_BE |
PIXEL_BGR << 16, ...): converted and resized in one pass, no full-size RGB copy. The objects
are printed, drawn into the frame with framebuf (ncnn_mp_lib/screen.py) and, with a third
argument, the frame is written as a PNG (ncnn_mp_lib/png.py) to look at.
"""

import sys

import ncnn_mp
from nanodet_detect import outputs
from ncnn_mp_lib import nanodet
from ncnn_mp_lib.png import write_png
from ncnn_mp_lib.screen import draw_detections, rgb565
from squeezenet_classify import fetched, read_ppm

Mat = ncnn_mp.Mat
COLOURS = (rgb565(0, 255, 0), rgb565(0, 128, 255), rgb565(255, 128, 0), rgb565(255, 0, 255))


def camera_frame(w: int, h: int, rgb: bytes, fmt: int) -> bytearray:
    """The photo as an RGB565 frame of format fmt (what the camera would give)."""
    return bytearray(Mat.from_pixels(rgb, Mat.PIXEL_RGB, w, h).to_pixels(fmt))


def detect(net: "ncnn_mp.Net", frame: "bytearray", fmt: int, w: int, h: int, side: int = 320) -> "list[nanodet.Object]":
    """NanoDet-m's objects in the frame, in its pixels, best first."""
    rw, rh, px, py, scale = nanodet.letterbox(w, h, side)
    x = Mat.from_pixels_resize(frame, fmt | Mat.PIXEL_BGR << 16, w, h, rw, rh)
    pw, ph = (rw + 31) // 32 * 32 - rw, (rh + 31) // 32 * 32 - rh
    x = x.copy_make_border(py, ph - py, px, pw - px, Mat.BORDER_CONSTANT, 0.0, ncnn_mp.Option())
    x.substract_mean_normalize(nanodet.MEAN, nanodet.NORM)
    found, mats = outputs(net, x)
    objects = nanodet.detect(found)
    mats.clear()
    return nanodet.to_photo(objects, w, h, px, py, scale)


def main(argv: "list[str]") -> None:
    folder = argv[2] if len(argv) > 2 else fetched("nanodet")
    fmt = Mat.PIXEL_RGB565 if len(argv) > 4 and argv[4] == "le" else Mat.PIXEL_RGB565_BE
    net = ncnn_mp.Net()
    net.load_param(folder + "/nanodet_m.param")
    net.load_model(folder + "/nanodet_m.bin")
    w, h, rgb = read_ppm(argv[1])
    frame = camera_frame(w, h, rgb, fmt)
    del rgb  # from here on only the frame, as on a board
    objects = detect(net, frame, fmt, w, h)
    boxes = []
    for o in objects:
        label = "%s %d%%" % (nanodet.LABELS[o[5]], int(o[0] * 100 + 0.5))
        print("%.4f box %.1f %.1f %.1f %.1f %s" % (o[0], o[1], o[2], o[3], o[4], label))
        boxes.append((o[1], o[2], o[3], o[4], label, COLOURS[o[5] % len(COLOURS)]))
    draw_detections(frame, w, h, boxes, big_endian=fmt == Mat.PIXEL_RGB565_BE)
    if len(argv) > 3:
        shown = bytes(Mat.from_pixels(frame, fmt, w, h).to_pixels(Mat.PIXEL_RGB))
        write_png(argv[3], w, h, shown)


if __name__ == "__main__":
    main(sys.argv)

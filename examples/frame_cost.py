# SPDX-License-Identifier: MIT
"""What one frame costs, stage by stage, for the three real-model examples: the network
(input conversion and extract), post-processing in plain Python and with the viper scan
(ncnn_mp_lib/detection.py), and drawing the result into the photo.

    MICROPYPATH=.frozen:. micropython -X heapsize=16M examples/frame_cost.py photo.ppm [models folder] [frames]

The models folder holds the three models' files (default: each model's folder in the cache
`make models` fetches into). Prints a table of medians over `frames` frames (default 5), in
microseconds, ncnn on one thread; exits with status 1 if the viper and plain post-processing
disagree on any frame.
"""

import sys

import nanodet_detect
import ncnn_mp
import retinaface_detect
from ncnn_mp_lib import nanodet, retinaface
import squeezenet_classify
from squeezenet_classify import fetched, read_ppm

try:
    import time

    def ticks() -> int:
        return time.ticks_us()  # type: ignore[attr-defined,no-any-return]
except ImportError:  # (a board without time: give run() its clock)
    pass

try:
    from typing import Any, Callable
except ImportError:  # MicroPython: the annotations are strings it never reads
    pass

SIDE = 320  # the detectors' input


def median(values: "list[int]") -> int:
    return sorted(values)[len(values) // 2]


def load(folder: str, name: str) -> "ncnn_mp.Net":
    net = ncnn_mp.Net()
    net.opt.num_threads = 1  # (the network's time then does not depend on the machine's cores)
    net.load_param(folder + "/" + name + ".param")
    net.load_model(folder + "/" + name + ".bin")
    return net


def squeezenet_frame(net: "ncnn_mp.Net", w: int, h: int, rgb: bytes, clock: "Callable[[], int]") -> "list[Any]":
    t0 = clock()
    probs = squeezenet_classify.classify(net, w, h, rgb)
    t1 = clock()
    plain = squeezenet_classify.top(probs, fast=False)
    t2 = clock()
    fast = squeezenet_classify.top(probs)
    t3 = clock()
    return [t1 - t0, t2 - t1, t3 - t2, None, plain, fast]


def nanodet_frame(net: "ncnn_mp.Net", w: int, h: int, rgb: bytes, clock: "Callable[[], int]") -> "list[Any]":
    t0 = clock()
    x, (px, py, scale) = nanodet_detect.network_input(w, h, rgb, SIDE)
    found, mats = nanodet_detect.outputs(net, x)
    t1 = clock()
    plain = nanodet.to_photo(nanodet.detect(found, fast=False), w, h, px, py, scale)
    t2 = clock()
    fast = nanodet.to_photo(nanodet.detect(found), w, h, px, py, scale)
    t3 = clock()
    nanodet_detect.draw(w, h, rgb, fast)
    t4 = clock()
    mats.clear()
    return [t1 - t0, t2 - t1, t3 - t2, t4 - t3, plain, fast]


def retinaface_frame(net: "ncnn_mp.Net", w: int, h: int, rgb: bytes, clock: "Callable[[], int]") -> "list[Any]":
    t0 = clock()
    x = ncnn_mp.Mat.from_pixels_resize(rgb, ncnn_mp.Mat.PIXEL_RGB, w, h, SIDE, SIDE)
    outputs, mats = retinaface_detect.outputs(net, x)
    t1 = clock()
    plain = retinaface.detect(outputs, fast=False)
    t2 = clock()
    fast = retinaface.detect(outputs)
    t3 = clock()
    retinaface_detect.draw(w, h, rgb, [(f[0], f[1] * w / SIDE, f[2] * h / SIDE, f[3] * w / SIDE, f[4] * h / SIDE,
                                        [(a * w / SIDE, b * h / SIDE) for a, b in f[5]]) for f in fast])
    t4 = clock()
    mats.clear()
    return [t1 - t0, t2 - t1, t3 - t2, t4 - t3, plain, fast]


# (the files' name, the model's name for `make models`, the table's title, one frame)
MODELS = (("squeezenet_v1.1", "squeezenet", "SqueezeNet v1.1 227x227", squeezenet_frame),
          ("nanodet_m", "nanodet", "NanoDet-m 320 (letterbox)", nanodet_frame),
          ("mnet.25-opt", "retinaface", "RetinaFace mnet.25 320x320", retinaface_frame))


def run(folder: "str | None", w: int, h: int, rgb: bytes, frames: int, clock: "Callable[[], int]") -> bool:
    """Prints the table; False if the two post-processing paths disagreed on a frame."""
    agree = True

    def cell(v: "int | None") -> str:
        return "-" if v is None else "%d" % v

    print("| model | network | post-processing (Python) | post-processing (viper scan) | drawing | found |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, fetched_as, title, frame in MODELS:
        net = load(folder or fetched(fetched_as), name)  # (no folder: each model's in make models' cache)
        frame(net, w, h, rgb, clock)  # warm-up: ncnn's first extract allocates its pools
        times: "list[list[int]]" = [[], [], [], []]
        found = 0
        for _ in range(frames):
            result = frame(net, w, h, rgb, clock)
            for i in range(4):
                if result[i] is not None:
                    times[i].append(result[i])
            agree = agree and result[4] == result[5]
            found = len(result[5])
        net.close()
        cells = tuple(cell(median(t) if t else None) for t in times)
        print("| %s | %s | %s | %s | %s | %d |" % (title, cells[0], cells[1], cells[2], cells[3], found))
    return agree


def main(argv: "list[str]") -> None:
    folder = argv[2] if len(argv) > 2 else None
    frames = int(argv[3]) if len(argv) > 3 else 5
    w, h, rgb = read_ppm(argv[1])
    print("%s: %dx%d, medians of %d frames, microseconds" % (argv[1], w, h, frames))
    if not run(folder, w, h, rgb, frames, ticks):
        print("the viper and the plain post-processing disagree")
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv)

# SPDX-License-Identifier: MIT
"""SqueezeNet v1.1 classifying a photo: the top 5 ImageNet classes with their labels.

    MICROPYPATH=.frozen:. micropython examples/squeezenet_classify.py photo.ppm [models folder]

The photo is a binary PPM (P6, 8-bit RGB: what `convert photo.jpg photo.ppm` or PIL's
`Image.save("photo.ppm")` write). The models folder holds squeezenet_v1.1.param/.bin and
synset_words.txt (default: `make models NAMES=squeezenet`'s folder, ~/.cache/ncnn_mp/models/squeezenet). Preprocessing as the
model was trained: resized to 227x227 by ncnn, RGB to BGR, the mean 104/117/123 subtracted.
"""

import array
import sys

import ncnn_mp
from ncnn_mp_lib.detection import top_k

MEAN = [104.0, 117.0, 123.0]  # B, G, R
SIDE = 227


def read_ppm(path: str) -> "tuple[int, int, bytes]":
    """(width, height, the RGB bytes) of a binary PPM."""
    with open(path, "rb") as f:
        data = f.read()
    fields: "list[bytes]" = []
    at = 0
    while len(fields) < 4:  # magic, width, height, maxval; '#' comments between them
        while data[at] in b" \t\r\n":
            at += 1
        if data[at] == ord("#"):
            while data[at] not in b"\r\n":
                at += 1
            continue
        start = at
        while data[at] not in b" \t\r\n":
            at += 1
        fields.append(data[start:at])
    if fields[0] != b"P6" or int(fields[3]) != 255:
        raise ValueError("%s: not an 8-bit binary PPM (P6)" % path)
    w, h = int(fields[1]), int(fields[2])
    return w, h, data[at + 1:at + 1 + w * h * 3]


def classify(net: "ncnn_mp.Net", w: int, h: int, rgb: bytes) -> "array.array[float]":
    """The 1000 class probabilities of the photo (an array of float32: one copy of the Mat's
    bytes, where a list would make a float object each)."""
    x = ncnn_mp.Mat.from_pixels_resize(rgb, ncnn_mp.Mat.PIXEL_RGB2BGR, w, h, SIDE, SIDE)
    x.substract_mean_normalize(MEAN, None)
    with net.create_extractor() as ex:
        ex.input("data", x)
        prob = ex.extract("prob")
        return array.array("f", bytes(memoryview(prob)))


def top(probs: "array.array[float]", k: int = 5, fast: bool = True) -> "list[int]":
    """The k best classes, best first (fast=False: without the viper scan)."""
    return top_k(memoryview(probs), k, fast)


def fetched(name: str) -> str:
    """The folder `make models` fetches model `name` into (its default cache; `python3 -m
    ncnn_mp_tools.models path NAME` prints it): the examples' default models folder."""
    import os

    return (os.getenv("HOME") or "") + "/.cache/ncnn_mp/models/" + name


def main(argv: "list[str]") -> None:
    folder = argv[2] if len(argv) > 2 else fetched("squeezenet")
    with open(folder + "/synset_words.txt") as f:
        labels = [line.strip().split(" ", 1)[1] for line in f]
    net = ncnn_mp.Net()
    net.load_param(folder + "/squeezenet_v1.1.param")
    net.load_model(folder + "/squeezenet_v1.1.bin")
    w, h, rgb = read_ppm(argv[1])
    probs = classify(net, w, h, rgb)
    for i in top(probs):
        print("%3d %.6f %s" % (i, probs[i], labels[i]))


if __name__ == "__main__":
    main(sys.argv)

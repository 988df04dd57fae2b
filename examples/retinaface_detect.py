"""Faces in a photo with RetinaFace MobileNet-0.25: boxes, scores and five landmarks.

    micropython examples/retinaface_detect.py photo.ppm [models folder] [input side]

The photo is a binary PPM (examples/squeezenet_classify.py reads it); the models folder holds
mnet.25-opt.param/.bin (default ../shared/models/real). The photo is resized to a square of
`input side` pixels (default 320; the network takes any size), fed as RGB without
normalisation, and the faces found (examples/retinaface.py) are printed in the photo's pixels.
"""

import sys

import ncnn_mp
import retinaface
from squeezenet_classify import read_ppm


def detect(net: "ncnn_mp.Net", w: int, h: int, rgb: bytes, side: int) -> "list[retinaface.Face]":
    """The faces in the photo, in its own pixels, best first."""
    x = ncnn_mp.Mat.from_pixels_resize(rgb, ncnn_mp.Mat.PIXEL_RGB, w, h, side, side)
    outputs = {}
    mats = []  # a memoryview does not keep its Mat alive: these do, until the decoding is done
    with net.create_extractor() as ex:
        ex.input("data", x)
        for stride in retinaface.STRIDES:
            cls, bbox, landmark = (ex.extract(name) for name in retinaface.output_names(stride))
            mats += [cls, bbox, landmark]
            outputs[stride] = (cls.w, cls.h, cls.cstep, memoryview(cls), memoryview(bbox), memoryview(landmark))
    faces = retinaface.detect(outputs)
    mats.clear()
    sx, sy = w / side, h / side
    return [(f[0], f[1] * sx, f[2] * sy, f[3] * sx, f[4] * sy, [(px * sx, py * sy) for px, py in f[5]])
            for f in faces]


def main(argv: "list[str]") -> None:
    folder = argv[2] if len(argv) > 2 else "../shared/models/real"
    side = int(argv[3]) if len(argv) > 3 else 320
    net = ncnn_mp.Net()
    net.load_param(folder + "/mnet.25-opt.param")
    net.load_model(folder + "/mnet.25-opt.bin")
    w, h, rgb = read_ppm(argv[1])
    for f in detect(net, w, h, rgb, side):
        points = " ".join("%.1f,%.1f" % p for p in f[5])
        print("face %.4f box %.1f %.1f %.1f %.1f landmarks %s" % (f[0], f[1], f[2], f[3], f[4], points))


if __name__ == "__main__":
    main(sys.argv)

# SPDX-License-Identifier: MIT
# The team's MNIST CNN (../shared/models/mnist) with a Python layer in front of it: the
# layer scales raw 0..255 pixels to 0..1 in place, then ncnn's convolutions classify.
import ncnn_mp
from mptest import ON_MCU, getenv, read, require

require("NCNN_STRING")  # the param text is edited by name
SHARED = getenv("NCNN_MP_SHARED_MODELS")
if not ON_MCU and not SHARED:
    print("SKIP: ../shared/models is not here")
    raise SystemExit
MNIST = (SHARED or "") + "/mnist"
try:
    read(MNIST + "/mnist.param")
except (OSError, KeyError):
    print("SKIP: no MNIST model in this firmware or folder")
    raise SystemExit


class Scale255(ncnn_mp.Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def forward_inplace(self, blob, opt):
        v = memoryview(blob)  # blob is named for the whole call: the view stays valid
        for i in range(len(v)):
            v[i] = v[i] / 255.0


lines = bytes(read(MNIST + "/mnist.param")).decode().split("\n")
layers, blobs = (int(n) for n in lines[1].split())
body = [line.replace(" 1 1 data conv0 ", " 1 1 scaled conv0 ") for line in lines[3:] if line]
param = "\n".join(["7767517", "%d %d" % (layers + 1, blobs + 1), lines[2], "Scale255 s 1 1 data scaled"] + body)

net = ncnn_mp.Net()
net.register_custom_layer("Scale255", Scale255)
net.load_param(ncnn_mp.DataReader(from_memory=param))
net.load_model(read(MNIST + "/mnist.bin"))
predicted = []
for digit in range(10):
    pgm = read("%s/%d.pgm" % (MNIST, digit))
    pixels = pgm[len(pgm) - 28 * 28:]  # a binary PGM ends with its 28x28 bytes
    x = ncnn_mp.Mat(28, 28, 1)
    for i in range(28 * 28):
        x[i] = pixels[i]
    with net.create_extractor() as ex:
        ex.input("data", x)
        out = ex.extract("fc")
        scores = [out[k] for k in range(10)]
    predicted.append(scores.index(max(scores)))
print("predicted", predicted)
net.close()
print("live custom layers", ncnn_mp.live_custom_layers())

# SPDX-License-Identifier: MIT
# A load that fails in one layer names that layer: ncnn's own load_param refusing a layer's
# parameters (an axis out of range), a layer's load_model failing (weights that ran out), the
# shape guard refusing a layer's weights (int8 without scales; the boards' ncnn has no Embed, whose
# table the guard checks too: ncnn_mp_input_shape_more.py). Before,
# the message named the call only ("ncnn could not load the param (error -1; ncnn's log on
# stderr says why)", "the weights ran out"). A binary param has no names: the layer's index and
# type. The Net loads a good model afterwards.
import struct

import ncnn_mp
from mptest import check, packed, require

require("NCNN_STRING")

opt = ncnn_mp.Option()
opt.num_threads = 1


def floats(*xs):
    """A weight as ModelBin reads it with type 0: a flag word (0: raw float32), the values."""
    return struct.pack("<I%df" % len(xs), 0, *xs)


def text(*lines):
    blobs = set()
    for line in lines:
        parts = line.split()
        n = int(parts[2]) + int(parts[3])
        blobs.update(parts[4:4 + n])
    return ("7767517\n%d %d\n%s\n" % (len(lines), len(blobs), "\n".join(lines))).encode()


net = ncnn_mp.Net()
net.opt = opt

print("-- load_param")
check("Slice of axis 5", lambda: net.load_param(text(
    "Input data 0 1 data", "Slice s 1 2 data a b 1=5 -23300=2,1,-233")))
check("Convolution of weight_data_size -18", lambda: net.load_param(text(
    "Input data 0 1 data", "Convolution conv 1 1 data out 0=2 1=3 6=-18")))


def binary(typeindex, params):
    """A binary param: an Input, then one layer of typeindex reading it into two blobs, with
    params as (id, value) pairs (a tuple value: an int array)."""
    words = [7767517, 2, 3, 16, 0, 1, 0, -233, typeindex, 1, 2, 0, 1, 2]
    for k, v in params:
        if isinstance(v, tuple):
            words += [-23300 - k, len(v)] + list(v)
        else:
            words += [k, v]
    words.append(-233)
    return struct.pack("<%di" % len(words), *words)


check("binary Slice of axis 5", lambda: net.load_param_bin(binary(31, [(1, 5), (0, (1, -233))])))

print("-- load_model")
net.load_param(text("Input data 0 1 data", "InnerProduct fc 1 1 data out 0=2 1=1 2=8"))
check("weights cut inside fc", lambda: net.load_model(floats(*range(8))))
net.load_param(text("Input data 0 1 data", "InnerProduct fc 1 1 data out 0=2 1=0 2=8"))
check("int8 weights without scales", lambda: net.load_model(struct.pack("<I8b", 0x000D4B38, *range(8))))

print("-- then a good model")
net.load_param(text("Input data 0 1 data", "InnerProduct fc 1 1 data out 0=2 1=1 2=8"))
net.load_model(floats(*range(8)) + floats(0.5, -0.5))
x = ncnn_mp.Mat(4)
x.fill(1.0)
with net.create_extractor() as ex:
    ex.input("data", x)
    print("fc:", packed(ex.extract("out")))
print("done")

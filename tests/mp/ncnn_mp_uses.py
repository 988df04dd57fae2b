# SPDX-License-Identifier: MIT
# Round two of "no crash": an object a call leans on is held for the whole call (its close()
# refused meanwhile, with one RuntimeError), what ncnn will read is checked before it reads,
# and a standalone forward gets the blob counts its layer reads. Each case crashed, or read
# freed memory, before (issue 21's list); each now raises, and the objects stay usable.
import gc
import struct

import ncnn_mp
from mptest import check, mat, packed, require

require("NCNN_STRING")  # (layers made by type name)

opt = ncnn_mp.Option()


def inner_product(num_output, inputs, int8=0):
    layer = ncnn_mp.Layer("InnerProduct")
    pd = ncnn_mp.ParamDict()
    pd.set(0, num_output)
    pd.set(1, 0)
    pd.set(2, num_output * inputs)
    pd.set(8, int8)
    layer.load_param(pd)
    return layer


def ones(n):
    m = ncnn_mp.Mat(n)
    m.fill(1.0)
    return m


print("-- 1. ModelBin(from_mat_array=): what ncnn reads is what it gets")
for label, weights in (("int8 weights, no int8 scales", ncnn_mp.Mat(40, elemsize=1)),
                       ("fp16-sized weights", ncnn_mp.Mat(40, elemsize=2)),
                       ("packed weights", ncnn_mp.Mat(10, elemsize=16, elempack=4)),
                       ("too few weights", ncnn_mp.Mat(39)),
                       ("no weights", None)):
    layer = inner_product(4, 10)
    check(label, lambda: layer.load_model(ncnn_mp.ModelBin(from_mat_array=[weights] if weights else [])))
layer = inner_product(4, 10, int8=1)  # int8 weights whose scales are not there
check("int8 weights, scales missing", lambda: layer.load_model(ncnn_mp.ModelBin(from_mat_array=[ncnn_mp.Mat(40, elemsize=1)])))
w = ones(40)
layer = inner_product(4, 10)
layer.load_model(ncnn_mp.ModelBin(from_mat_array=[w]))
print("float32 weights", packed(layer.forward(ones(10), opt)))

print("-- 2. a ModelBin whose DataReader was closed")
dr = ncnn_mp.DataReader(from_memory=bytes(4 * 40))
mb = ncnn_mp.ModelBin(from_datareader=dr)
dr.close()
check("Layer.load_model", lambda: inner_product(4, 10).load_model(mb))
check("ModelBin.load", lambda: mb.load(40, 1))

print("-- 3. a DataReader over a bytearray that grew (and moved) since")
weights = bytearray(struct.pack("<I", 0) + struct.pack("<f", 100.0) * 40)
dr = ncnn_mp.DataReader(from_memory=weights)
mb = ncnn_mp.ModelBin(from_datareader=dr)
weights.extend(bytes(4096))  # (a bigger block: the old one is free for the next allocation)
junk = [bytes(range(256)) for _ in range(40)]
layer = inner_product(4, 10)
layer.load_model(mb)
print("reads where the buffer is now", packed(layer.forward(ones(10), opt)))
del junk


print("-- 4. close() while a call reads through it: one RuntimeError, whoever tries")


class ClosesModelBin(ncnn_mp.DataReader):
    def read(self, n):
        check("ModelBin.close in read()", lambda: self.mb.close())
        check("DataReader.close in read()", lambda: self.close())
        return bytes(n)


r = ClosesModelBin()
mb = ncnn_mp.ModelBin(from_datareader=r)
r.mb = mb
print("ModelBin.load", mb.load(10, 1).w)
print("Layer.load_model", inner_product(1, 10).load_model(mb))
mb.close()
r.close()
check("after closing", lambda: mb.load(10, 1))

print("-- 5. copy=False: only memory that stays")
over = ncnn_mp.Mat(4, 4, data=bytes(64))
border = over.copy_make_border(1, 1, 1, 1, ncnn_mp.Mat.BORDER_CONSTANT, 0.0, opt)  # new storage, read-only
net = ncnn_mp.Net()
check("read-only view of a Mat's own storage", lambda: net.load_model(memoryview(border), copy=False))
check("a view into the middle of a Mat over bytes", lambda: net.load_model(memoryview(ncnn_mp.Mat(4, data=memoryview(bytes(256))[64:80])), copy=False))
net.close()

print("-- 8. a standalone forward gets the blob counts the layer reads")


def forward(kind, n_bottoms, n_top, params=()):
    layer = ncnn_mp.Layer(kind)
    pd = ncnn_mp.ParamDict()
    for k, v in params:
        pd.set(k, v)
    layer.load_param(pd)
    return layer.forward([mat(1, 2, 3, 4) for _ in range(n_bottoms)], n_top, opt)


check("Eltwise, one input", lambda: forward("Eltwise", 1, 1))
check("BinaryOp, one input", lambda: forward("BinaryOp", 1, 1))
check("Slice without slices, two tops", lambda: forward("Slice", 1, 2))
SLICES = ncnn_mp.Mat(2, data=struct.pack("<4i", 1, -233, 0, 0))  # (ints: 1, then the rest; padded)
check("Slice of 2 slices, three tops", lambda: forward("Slice", 1, 3, [(0, SLICES)]))
check("ReLU, two tops of one input", lambda: forward("ReLU", 1, 2))
check("Concat, two tops", lambda: forward("Concat", 2, 2))
print("Eltwise, two inputs", [packed(t) for t in forward("Eltwise", 2, 1)])
print("Slice of 2 slices", [packed(t) for t in forward("Slice", 1, 2, [(0, SLICES)])])
print("Split, three tops", len(forward("Split", 1, 3)))
gc.collect()
print("done")

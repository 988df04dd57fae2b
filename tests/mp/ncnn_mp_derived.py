# SPDX-License-Identifier: MIT
# Mats derived from other Mats: which allocator a result holds, views of Mats ncnn lends
# a custom layer (they expire with it), and Mats over buffers that moved (issue 11).
import gc
import struct

import ncnn_mp
from mptest import check, mat, packed, require

require("NCNN_STRING")  # layer and blob names


# 1. A standalone layer's result keeps the allocator its data came from.
a = ncnn_mp.Allocator()
opt = ncnn_mp.Option()
opt.set_blob_allocator(a)
relu = ncnn_mp.Layer("ReLU")
r = relu.forward(mat(-1.0, 2.0, -3.0, 4.0), opt)
tops = ncnn_mp.Layer("Split").forward([mat(5.0, 6.0)], 2, opt)
opt.set_blob_allocator(None)
a.close()
del opt
gc.collect()
print("ReLU result after its allocator was closed", packed(r))
print("Split results", [packed(t) for t in tops])
del r, tops
gc.collect()
print("results dropped: no abort")

# The same through a lent Option: ncnn's pools die with the net, so the result uses
# ncnn's default allocator instead.
held = []


class Standalone(ncnn_mp.Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, opt):
        held.append(ncnn_mp.Layer("ReLU").forward(bottom.clone(), opt))
        return bottom.clone()


# 2. Views of lent Mats kept past the callback.
kept = []
views = {}


class Keep(ncnn_mp.Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def forward_inplace(self, blob, opt):
        views["reshape"] = blob.reshape(blob.w)
        views["reshape of reshape"] = views["reshape"].reshape(2, 2)
        views["batch"] = blob.batch(0)
        views["flatten"] = blob.flatten(opt)
        views["convert_packing"] = blob.convert_packing(1, opt)
        views["zero border"] = blob.copy_make_border(0, 0, 0, 0, 0, 0.0, opt)
        views["Split layer"] = ncnn_mp.Layer("Split").forward([blob], 2, opt)[1]
        views["Mat over it"] = ncnn_mp.Mat(4, data=blob)
        views["Mat over a memoryview of it"] = ncnn_mp.Mat(4, data=memoryview(blob))
        views["clone"] = blob.clone()
        views["reshape"][0] = 10.0  # a view writes through to the blob
        print("inside: views see the blob", packed(views["reshape of reshape"]), packed(views["Mat over it"]))
        kept.append(blob)


net = ncnn_mp.Net()
net.register_custom_layer("Keep", Keep)
net.register_custom_layer("Standalone", Standalone)
net.load_param_mem("7767517\n3 3\nInput data 0 1 data 0=4\nKeep k 1 1 data mid\nStandalone s 1 1 mid out\n")
net.load_model(b"")
with net.create_extractor() as ex:
    ex.input("data", mat(1.0, 2.0, 3.0, 4.0))
    out = ex.extract("out")
print("out", packed(out), "standalone ReLU through a lent Option", packed(held[0]))
net.clear()
gc.collect()
print("the clone is the blob as it was", packed(views.pop("clone")))
for name in sorted(views):
    v = views[name]
    check(name + " used after the callback", lambda: v.fill(0.0))
    check(name + " read", lambda: v[0])
    check(name + " memoryview", lambda: memoryview(v))
check("lent Mat reshaped after the callback", lambda: kept[0].reshape(4))
net.close()
views.clear()
gc.collect()
print("views dropped after the net: no abort")

# 3. A Mat over a buffer that was resized (and so moved).
b = bytearray(16)
m = ncnn_mp.Mat(4, data=b)
v = m.reshape(2, 2)
whole = m.batch(0)
b.extend(bytes(4096))
check("memoryview after the buffer moved", lambda: memoryview(m))
check("fill after the buffer moved", lambda: m.fill(1.0))
check("index after the buffer moved", lambda: m[0])
check("a reshape of it after the buffer moved", lambda: v[0])
check("its batch view after the buffer moved", lambda: memoryview(whole))
m2 = ncnn_mp.Mat(4)
over = ncnn_mp.Mat(4, data=m2)
m2.create(8)
check("a Mat over a Mat given new storage", lambda: over[0])

# 4. A Mat over a Python buffer as an Extractor input feeding an in-place layer: ncnn
# dereferenced the (absent) reference count of such storage and crashed, and would have
# written the layer's result into the caller's buffer.
b = bytearray(struct.pack("<16f", *[x - 8.0 for x in range(16)]))
over = ncnn_mp.Mat(16, data=b)
relu_net = ncnn_mp.Net()
relu_net.load_param_mem("7767517\n2 2\nInput data 0 1 data\nReLU r 1 1 data out\n")
relu_net.load_model(b"")
with relu_net.create_extractor() as ex:
    ex.input("data", over)
    out = ex.extract("out")
    ex.input("data", over.reshape(4, 4))
    out2 = ex.extract("out")
print("in-place layer on a Mat over a bytearray", packed(out)[6:10], packed(out2)[6:10], "input untouched", packed(over)[6:10])
b.extend(bytes(4096))
print("the result does not point into the buffer", packed(out)[6:10])

# 5. A 2-D border cut of a 4-D Mat: ncnn's own gave d=0 and cstep=0 (API fuzzer).
m4 = ncnn_mp.Mat(3, 2, 2, 3)
m4.fill(1.0)
print("cut border of a 4-D Mat", m4.copy_cut_border(0, 0, 1, 0, ncnn_mp.Option()))

# 6. An Extractor holds the allocators its net's option had when it was made: the net may
# be given others, and the old one closed, while the Extractor still allocates from it.
a = ncnn_mp.Allocator(unlocked=True)
relu_net.opt.set_blob_allocator(a)
ex = relu_net.create_extractor()
relu_net.opt.set_blob_allocator(None)
a.close()
del a
gc.collect()
ex.input("data", mat(-1.0, 2.0))
r = ex.extract("out")
ex.close()
del ex
gc.collect()
print("extract after the net's allocator was replaced and closed", packed(r))

# 7. A result handed the very storage of the Mat it came from holds that storage's
# allocator: when both die in one collection, either finaliser may run first (API fuzzer:
# flatten with an Allocator, then convert_packing, then both dropped).
for _ in range(3):
    a = ncnn_mp.Allocator()
    o = ncnn_mp.Option()
    o.set_blob_allocator(a)
    x = ncnn_mp.Mat(2, 2, 4)
    x.fill(1.5)
    flat = x.flatten(o)
    views = [flat.convert_packing(flat.elempack, ncnn_mp.Option()), flat.reshape(flat.w)]
    o.set_blob_allocator(None)
    del a, o, x, flat
    views = None
    gc.collect()
print("results sharing a source's storage outlive its allocator's other holders")
# 9. A Python subclass's instance as an Extractor input: the Extractor keeps the Mat object
# itself (the subclass instance was read as a Mat, and extract crashed).
class Sub(ncnn_mp.Mat):
    pass

s = Sub(4)
s.fill(-2.0)
s_over = Sub(4, data=bytearray(struct.pack("<4f", -1.0, 1.0, -3.0, 3.0)))
with relu_net.create_extractor() as ex:
    ex.input("data", s)
    first = ex.extract("out")
    second = ex.extract("out")  # (the inputs handed again)
with relu_net.create_extractor() as ex:
    ex.input("data", s_over)  # (ncnn gets a copy: the storage is a Python buffer's)
    third = ex.extract("out")
print("a Mat subclass as an input", packed(first), packed(second), packed(third))

# 10. Storage given back or changed under views and inputs. A batch view lies over its Mat's
# storage without counting it; once that Mat got new storage twice, the C heap handed the
# old address back to a smaller create() (seen with glibc) and the view, checked by address
# only, read and wrote past the new storage's end. It must stay refused whatever the
# address: the storage it spans is checked too.
p = ncnn_mp.Mat(4096, n=2)
p.fill(1.0)
bv = p.batch(1)
p.create(9000)
for w in (16, 64, 256, 1024):
    p.create(w)
    check("a batch view after its Mat got new storage (create(%d))" % w, lambda: bv[4000])
# release(): the storage goes now, the Mat is empty and can be given storage again.
p = ncnn_mp.Mat(8, n=2)
p.fill(3.0)
bv = p.batch(0)
q = mat(1.0, 2.0, 3.0, 4.0)
counted = q.reshape(2, 2)
q.release()
p.release()
print("released:", p.dims, p.w, len(p), q.dims, "a reshape keeps the values it shares", packed(counted))
check("a batch view of a released Mat", lambda: bv[0])
check("a released Mat as an input", lambda: relu_net.create_extractor().input("data", p))
p.release()
p.create(2)
p.fill(-1.0)
print("released twice, then create:", packed(p))
# An input Mat changed after input(): every extract hands ncnn the Mats again, and input()'s
# checks hold for them then too (an int8 Mat was read as floats past its end).
x = mat(-1.0, 2.0, -3.0, 4.0)
with relu_net.create_extractor() as ex:
    ex.input("data", x)
    print("extract", packed(ex.extract("out")))
    x.release()
    check("extract after the input was released", lambda: ex.extract("out"))
    x.create(4, elemsize=1)
    check("extract after the input became int8", lambda: ex.extract("out"))
    x.create(4)
    x.fill(5.0)
    # (an Extractor keeps the blobs it computed: the same out, as in ncnn)
    print("extract after the input got float32 storage again", packed(ex.extract("out")))
with relu_net.create_extractor() as ex:
    ex.input("data", x)
    print("a new Extractor with it", packed(ex.extract("out")))
with relu_net.create_extractor() as ex:  # given by blob index: the message names the index
    ex.input(0, x)
    ex.extract("out")
    x.release()
    check("extract after an input given by index was released", lambda: ex.extract("out"))
print("done")

# SPDX-License-Identifier: MIT
# Mat: shapes, properties, data access, copies and reshapes.
import array
import struct

import ncnn_mp
from mptest import require_mat_helpers

require_mat_helpers()

Mat = ncnn_mp.Mat


def shape(m):
    return (m.dims, m.w, m.h, m.d, m.c, m.elemsize, m.elempack, m.cstep)


# Positional shapes follow ncnn's C++: Mat(w), Mat(w, h), Mat(w, h, c), Mat(w, h, d, c).
print(shape(Mat()))
print(shape(Mat(5)))
print(shape(Mat(5, 3)))
print(shape(Mat(5, 3, 2)))
print(shape(Mat(5, 3, 2, 4)))
# Keywords as in the earlier ncnn_mp: d only with c; h defaults to 1 when c is given.
print(shape(Mat(w=5, c=2)))
print(shape(Mat(w=4, h=2, d=3, c=2)))
print(shape(Mat(4, elemsize=2)))
print(shape(Mat(4, 2, elemsize=16, elempack=4)))
print(bool(Mat()), bool(Mat(1)), len(Mat()), len(Mat(5, 3, 2)))
print(repr(Mat(2, 3)))

# fill / Mat[i] / memoryview all see the same storage.
m = Mat(3, 2)
m.fill(1.5)
m[4] = -2.0
m[-1] = 7
print([m[i] for i in range(len(m))])
mv = memoryview(m)
print(len(mv), mv[4], mv[5])
mv[0] = 3.25
print(m[0])
print(m.to_bytes() == struct.pack("<6f", 3.25, 1.5, 1.5, 1.5, -2.0, 7.0))

# 3-D: channels start every cstep floats; to_bytes/from_bytes skip the padding.
c3 = Mat(3, 1, 2)
print(c3.cstep, len(c3), len(memoryview(c3)))
c3.from_bytes(struct.pack("<6f", 1, 2, 3, 4, 5, 6))
print(list(memoryview(c3))[0:3], list(memoryview(c3))[4:7])
print(struct.unpack("<6f", c3.to_bytes()))

# clone is deep; reshape shares storage when no repacking is needed.
k = m.clone()
k[0] = 100
print(m[0], k[0])
r = m.reshape(6)
r[1] = 9
print(shape(r), m[1])
print(shape(m.reshape(2, 3)), shape(m.reshape(1, 2, 3)), shape(m.reshape(1, 1, 2, 3)))
flat = c3.reshape(6)  # repacks: channel padding removed
print(list(memoryview(flat)))

# clone_from / create (CPython ncnn style).
t = Mat()
t.clone_from(m)
print(shape(t), t[1])
t.create(2, 2)
print(shape(t))
t.create(2, 3, 4)
print(shape(t))
t.create(2, 3, 4, 5, elemsize=2)
print(shape(t))

# flatten / convert_packing with an Option.
opt = ncnn_mp.Option()
opt.num_threads = 1
f = c3.flatten(opt)
print(shape(f), list(memoryview(f)))
big = Mat(2, 2, 8)
for i in range(len(big)):
    big[i] = i
p4 = big.convert_packing(4, opt)
print(shape(p4))
back = p4.convert_packing(1, opt)
print(back.to_bytes() == big.to_bytes())

# substract_mean_normalize: per channel (x - mean) * norm; floats, buffers or None.
s = Mat(2, 1, 2)
s.from_bytes(struct.pack("<4f", 1, 2, 3, 4))
s.substract_mean_normalize([1, 2], None)
print(struct.unpack("<4f", s.to_bytes()))
s.substract_mean_normalize(None, array.array("f", [2, 0.5]))
print(struct.unpack("<4f", s.to_bytes()))

# Zero-copy over a Python buffer: writes go both ways; bytes give a read-only Mat.
buf = bytearray(struct.pack("<4f", 1, 2, 3, 4))
e = Mat(4, data=buf)
e[0] = 10
print(struct.unpack("<4f", buf)[0], e[3])
ro = Mat(2, 2, data=struct.pack("<4f", 1, 2, 3, 4))
print(ro[3], ro.clone()[3])
arr = array.array("f", [0] * 8)
e3 = Mat(2, 1, 2, data=arr)  # channel 1 starts at float 4 (16-byte cstep)
e3.fill(2)
print(list(arr))

# Batches (n): to_bytes/from_bytes walk every batch; batch(b) is a view of one.
bm = Mat(3, 1, 2, n=2)
print("batch", bm.n, bm.nstep >= 2 * bm.cstep, len(bm) == bm.nstep + bm.cstep + 3)
bm.from_bytes(struct.pack("<12f", *range(12)))
print(struct.unpack("<12f", bm.to_bytes()))
view = bm.batch(1)
print("batch(1)", view.n, struct.unpack("<6f", view.to_bytes()))
view.fill(-1)
print(struct.unpack("<12f", bm.to_bytes()))
print("1-D batch", Mat(5, n=3).n, Mat(2, 2, 2, 2, n=2).batch(1).dims)
print("OK")

# SPDX-License-Identifier: MIT
# Mat: every misuse raises a clear exception, and the process stays healthy.
import gc
import struct

import ncnn_mp
from mptest import *  # noqa: F401,F403

require_mat_helpers()

Mat = ncnn_mp.Mat


def setitem(o, i, v):
    o[i] = v


def delitem(o, i):
    del o[i]



check("negative w", lambda: Mat(-1))
check("negative c", lambda: Mat(2, 2, -3))
check("zero h with c", lambda: Mat(2, 0, 0, 3) and Mat(0, 2))
check("huge", lambda: Mat(1 << 20, 1 << 20))
check("big int", lambda: Mat(1 << 70))
check("float w", lambda: Mat(2.5))
check("str w", lambda: Mat("3"))
check("None w", lambda: Mat(None))
check("5 positional", lambda: Mat(1, 2, 3, 4, 5))
check("w twice", lambda: Mat(2, w=3))
check("d without c", lambda: Mat(w=2, h=2, d=2))
check("bad elempack", lambda: Mat(4, elemsize=6, elempack=4))
# Elements ncnn's layers take: 8, 16 or 32 bits (flatten() on an elemsize-3 Mat wrote past its output).
check("elemsize 3", lambda: Mat(1, 16, 16, elemsize=3))
check("elemsize 8", lambda: Mat(4, elemsize=8))
check("elempack 3", lambda: Mat(4, elemsize=12, elempack=3))
check("create elemsize 3", lambda: Mat(4).create(4, elemsize=3))
check("data= elemsize 3", lambda: Mat(4, elemsize=3, data=bytearray(64)))
check("bad allocator", lambda: Mat(4, allocator=3))
check("data no shape", lambda: Mat(data=bytearray(16)))
check("data too small", lambda: Mat(5, data=bytearray(20)))
check("data not buffer", lambda: Mat(4, data=[1, 2, 3, 4]))
ro = Mat(4, data=bytes(16))
check("write bytes-backed", lambda: ro.fill(1))
check("setitem bytes-backed", lambda: setitem(ro, 0, 1))
check("from_bytes bytes-backed", lambda: ro.from_bytes(bytes(16)))
m = Mat(3, 2)
check("index out of range", lambda: m[6])
check("negative index out of range", lambda: m[-7])
check("str index", lambda: m["a"])
check("del item", lambda: delitem(m, 0))
check("setitem str", lambda: setitem(m, 0, "x"))
check("from_bytes wrong size", lambda: m.from_bytes(bytes(5)))
check("from_bytes not buffer", lambda: m.from_bytes(5))
check("fill str", lambda: m.fill("x"))
check("reshape wrong count", lambda: m.reshape(7))
check("reshape zero", lambda: m.reshape(0))
check("reshape no args", lambda: m.reshape())
check("reshape too many", lambda: m.reshape(1, 1, 1, 1, 6))
check("reshape bad allocator", lambda: m.reshape(6, "x"))
check("clone bad allocator", lambda: m.clone(1))
check("clone_from not Mat", lambda: m.clone_from(3))
check("create no w", lambda: m.create())
check("create negative", lambda: m.create(-2))
check("flatten no Option", lambda: m.flatten(None))
check("flatten empty", lambda: Mat().flatten(ncnn_mp.Option()))
check("convert_packing 3", lambda: m.convert_packing(3, ncnn_mp.Option()))
check("mean wrong length", lambda: Mat(2, 1, 2).substract_mean_normalize([1], None))
check("mean wrong type", lambda: Mat(2, 1, 2).substract_mean_normalize("ab", None))
check("mean buffer wrong size", lambda: Mat(2, 1, 2).substract_mean_normalize(struct.pack("<f", 1), None))
check("mean int array", lambda: Mat(2, 1, 2).substract_mean_normalize(__import__("array").array("i", [1, 2]), None))
check("mean str items", lambda: Mat(2, 1, 2).substract_mean_normalize(["a", "b"], None))
check("normalize empty", lambda: Mat().substract_mean_normalize(None, None))
check("fill int8 Mat", lambda: Mat(4, elemsize=1).fill(1))
check("index int8 Mat", lambda: Mat(4, elemsize=1)[0])
check("batch with data", lambda: Mat(4, data=bytearray(16), n=2))
check("batch 0", lambda: Mat(4, n=0))
check("batch index out of range", lambda: Mat(4, n=2).batch(2))
check("batch of an empty Mat", lambda: Mat().batch(0))
check("reshape a batch", lambda: Mat(4, n=2).reshape(2, 2))
# A bytearray that grows may move: the Mat over it refuses instead of writing to freed memory.
grow = bytearray(16)
over = Mat(4, data=grow)
grow.extend(bytearray(4096))
check("buffer moved", lambda: over.fill(1))
# Still healthy: the heap works and the Mats work.
gc.collect()
ok = Mat(2, 2)
ok.fill(3)
print("healthy", ok[3], len(m), len(ro))

# SPDX-License-Identifier: MIT
# Stress: many extracts through several Python layers, hundreds of registered types,
# garbage collection inside callbacks; neither ncnn_mp's held layers nor the heap grow.
import gc

import ncnn_mp
from mptest import MEMORY_IS_TOOLS, ON_MCU, STALE_NETS, c_memory_kib, getenv, judged, require, settle

require("NCNN_STRING")  # layer and blob names


class Inc(ncnn_mp.Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def forward_inplace(self, blob, opt):
        blob[0] += 1


class Copy(ncnn_mp.Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, opt):
        return bottom.clone()


class Collect(Inc):
    def forward_inplace(self, blob, opt):
        gc.collect()
        blob[0] += 1


PARAM = """7767517
5 5
Input   data 0 1 data 0=2
Inc     a    1 1 data x1
Copy    b    1 1 x1 x2
Collect c    1 1 x2 x3
Inc     d    1 1 x3 out
"""
net = ncnn_mp.Net()
for name, cls in (("Inc", Inc), ("Copy", Copy), ("Collect", Collect)):
    net.register_custom_layer(name, cls)
net.load_param_mem(PARAM)
net.load_model(b"")
m = ncnn_mp.Mat(2)
m.fill(0)


def extracts(n):
    total = 0.0
    for _ in range(n):
        ex = net.create_extractor()
        ex.input("data", m)
        total += ex.extract("out")[0]
    return total


N = 10000
extracts(1000)  # warm up: ncnn's pools and the GC heap reach their working size
gc.collect()
heap0, rss0 = gc.mem_alloc(), c_memory_kib()
print("extracts", extracts(N) == 3.0 * N)
gc.collect()
grown, rss_grown = gc.mem_alloc() - heap0, c_memory_kib() - rss0
print("heap did not grow", judged("heap growth", grown, 256, " B"), "live layers", ncnn_mp.live_custom_layers())
# KiB: ncnn's and MicroPython's memory stay put (in the plain run: MEMORY_IS_TOOLS).
print("C memory did not grow", MEMORY_IS_TOOLS or judged("C memory growth", rss_grown, 64, " KiB"))

# 300 distinct types, each its own class, registered on one net and used once in a chain.
# (30 on an MCU or under the sanitizers: ncnn runs a chain recursively, and 300 Python
# layers deep exceed the board's 16 KiB Python stack limit, or ASan's larger frames the
# Unix port's, a RuntimeError there.)
TYPES = 30 if ON_MCU or getenv("NCNN_MP_SANITIZED") else 300


def chained():
    # (in a function: its Net, Extractor and result die with its frame, and no temporary of
    # the module's frame keeps them; the collector scans the C stack conservatively, and a
    # stale word to this net would keep all TYPES of its layers)
    lines = ["Input data 0 1 data 0=2"]
    big = ncnn_mp.Net()
    prev = "data"
    for i in range(TYPES):
        big.register_custom_layer("T%d" % i, type("T%d" % i, (Inc,), {}))
        lines.append("T%d l%d 1 1 %s b%d" % (i, i, prev, i))
        prev = "b%d" % i
    big.load_param_mem("7767517\n%d %d\n%s\n" % (len(lines), len(lines), "\n".join(lines)))
    big.load_model(b"")
    with big.create_extractor() as ex:
        ex.input("data", m)
        out = ex.extract(prev)[0]
    return out == TYPES, ncnn_mp.live_custom_layers() == TYPES + 4


print("chained types", *chained())
net.clear()
# The GC scans the C stack conservatively: a stale word may keep the last net alive. The
# chain ran ncnn's recursion TYPES layers deep, deeper than scrub() reaches on a board, and
# where its frames were depends on the build (the Xtensa firmware kept `big` so): a chain as
# deep of built-in layers runs over that stack first, and whatever of it stays alive holds no
# Python layer.
plain = ncnn_mp.Net()
lines = ["Input data 0 1 data 0=2"] + ["ReLU r%d 1 1 %s b%d" % (i, "data" if i == 0 else "b%d" % (i - 1), i)
                                       for i in range(TYPES)]
plain.load_param_mem("7767517\n%d %d\n%s\n" % (len(lines), len(lines), "\n".join(lines)))
plain.load_model(b"")
with plain.create_extractor() as ex:
    ex.input("data", m)
    ex.extract("b%d" % (TYPES - 1))
del plain, ex
print("after clear and drop", judged("custom layers alive", settle(), STALE_NETS))

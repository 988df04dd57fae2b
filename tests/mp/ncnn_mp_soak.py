# SPDX-License-Identifier: MIT
# Creating and dropping 10,000 Nets, Mats and Extractors leaves the heap and the process as they were.
import gc

import ncnn_mp
from mptest import DIGITS_MODEL, DIGITS_PARAM, MEMORY_IS_TOOLS, STALE_NETS, c_memory_kib, digits_net, getenv, judged, read, require, settle

require("NCNN_STRING")  # layer and blob names


param, weights = read(DIGITS_PARAM), read(DIGITS_MODEL)
x = ncnn_mp.Mat(8, 8, 1)
x.fill(3)


def cycle(n):
    for i in range(n):
        net = digits_net()
        net.load_param(param)
        net.load_model(weights)
        ex = net.create_extractor()
        ex.input("data", x)
        out = ex.extract("prob")
        m = ncnn_mp.Mat(16, 16, 4, allocator=ncnn_mp.Allocator() if i % 3 == 0 else None)
        m.fill(out[0])
        if i % 2:
            ex.close()


N = 1000 if getenv("NCNN_MP_UNDER_VALGRIND") == "1" else 10000
# Warm up with as many cycles as are measured: tables that only grow to a high-water
# mark (the GC root dict of custom layers holds every Net not yet collected) get there.
cycle(N)
settle()
heap0, rss0 = gc.mem_alloc(), c_memory_kib()
cycle(N)
settle()
heap_grown, rss_grown = gc.mem_alloc() - heap0, c_memory_kib() - rss0
# The GC's own bookkeeping moves the figure by a few KiB either way; a leak of one small
# object per cycle would add 160 KiB here.
print("heap did not grow", judged("heap growth", heap_grown, 4096, " B"))
print("C memory did not grow", MEMORY_IS_TOOLS or judged("C memory growth", rss_grown, 256, " KiB"))
print("live custom layers", judged("live custom layers", settle(), STALE_NETS))

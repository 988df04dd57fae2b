# SPDX-License-Identifier: MIT
# Allocator(arena=size): every blob and workspace of an extract from one block reserved up front
# (docs/usage.md#an-arena-of-fixed-size). The outputs are the default allocator's; the arena's
# peak is what the extract needs of it, so an arena of exactly that size runs it again and one
# block smaller fails with MemoryError, after which the Net, the arena and the heap are intact.
# A result kept past the Allocator's close() keeps its block; two threads may share one arena.
# Allocator.plan(): the extract's blocks laid out once; Allocator(arena=plan) replays it in no
# more than first fit took, every block as planned; what strays from the plan (a result kept
# into the next extract) goes to the spare part, or is a MemoryError without one. A plan that
# is not one is a ValueError.
import gc

import ncnn_mp
from mptest import check, require

try:
    import _thread
except ImportError:
    _thread = None

require("NCNN_STRING")
seed = 3


def rand(n):
    global seed
    seed = (seed * 75 + 74) % 65537
    return seed % n


def weights(n):
    import struct
    return struct.pack("<%df" % n, *[(rand(200) - 100) / 400 for _ in range(n)])


LINES = ["Input data 0 1 data", "Convolution c0 1 1 data a 0=8 1=3 4=1 5=1 6=216 9=1",
         "Pooling p0 1 1 a b 0=0 1=2 2=2", "Convolution c1 1 1 b out 0=4 1=3 5=1 6=288"]
PARAM = "7767517\n4 4\n" + "\n".join(LINES) + "\n"
MODEL = bytes(4) + weights(216) + weights(8) + bytes(4) + weights(288) + weights(4)

net = ncnn_mp.Net()
net.opt.num_threads = 1
net.load_param_mem(PARAM)
net.load_model(MODEL)
x = ncnn_mp.Mat(24, 20, 3)
for i in range(len(memoryview(x))):
    memoryview(x)[i] = (rand(1000) - 500) / 100


def run(alloc=None):
    ex = net.create_extractor()
    opt = ncnn_mp.Option()
    opt.num_threads = 1
    if alloc is not None:
        opt.set_blob_allocator(alloc)
        opt.set_workspace_allocator(alloc)
    ex.set_option(opt)
    ex.input("data", x)
    out = ex.extract("out")
    ex.close()
    return out


want = run().to_bytes()
arena = ncnn_mp.Allocator(arena=64 * 1024)
print(arena, arena.size, arena.in_use, arena.peak)
out = run(arena)
print("equal to the default allocator's:", out.to_bytes() == want)
print("in use while the result lives:", 0 < arena.in_use <= arena.peak <= arena.size)
need = arena.peak
del out
gc.collect()
print("in use once it is gone:", arena.in_use)

# Exactly the peak is enough; a block less is not, and nothing is left behind.
exact = ncnn_mp.Allocator(arena=need)
print("an arena of the peak:", run(exact).to_bytes() == want, exact.peak == need)
gc.collect()
small = ncnn_mp.Allocator(arena=need - 16)
check("an arena too small", lambda: run(small))
gc.collect()
print("after the failure: in use", small.in_use, "| the net still runs:", run().to_bytes() == want)
print("and in the arena:", run(arena).to_bytes() == want)
gc.collect()

# reset_peak, the peak again the same.
arena.reset_peak()
print("reset:", arena.peak, "| again:", run(arena) is not None, arena.peak == need)
gc.collect()

# A result kept past close(): its block stays, readable; the arena goes with the last Mat.
kept = run(arena)
arena.close()
print(arena, "| the result:", kept.to_bytes() == want)
check("closed arena's peak", lambda: arena.peak)
del kept
gc.collect()

# A plan: no larger than first fit, replayed exactly, frame after frame.
big = ncnn_mp.Allocator(arena=64 * 1024)
run(big)
gc.collect()
plan = big.plan()
planned = ncnn_mp.Allocator(arena=plan)
print("planned:", planned.size <= need, planned.size % 16 == 0, len(plan) > 16)
same = 0
for _ in range(3):
    out = run(planned)
    same += out.to_bytes() == want
    out = None
    gc.collect()
print("replayed:", same, "of 3, off the plan:", planned.unplanned, "in use after:", planned.in_use)
# A result kept into the next extract: its place is taken, so that block goes to the spare
# part (and without one, MemoryError); the result stays right either way.
kept = run(planned)
check("kept, no spare", lambda: run(planned))
gc.collect()
spared = ncnn_mp.Allocator(arena=plan, spare=need)
kept = run(spared)
again = run(spared)
print("kept, spare:", kept.to_bytes() == want, again.to_bytes() == want, spared.unplanned > 0)
kept = again = None
gc.collect()
check("plan of a pool", lambda: ncnn_mp.Allocator().plan())
check("plan of nothing", lambda: ncnn_mp.Allocator(arena=1024).plan())
check("not a plan", lambda: ncnn_mp.Allocator(arena=b"not a plan at all"))
check("plan cut short", lambda: ncnn_mp.Allocator(arena=plan[:-8]))
broken = bytearray(plan)
broken[24:28] = b"\xff\xff\xff\x7f"  # (the first block's offset past the planned size: after the 20-byte header and its size)
check("plan out of bounds", lambda: ncnn_mp.Allocator(arena=broken))
crowded = bytearray(plan)
crowded[16:20] = bytes(4)  # (no block alive at once: the header's fifth word)
check("plan with no block alive", lambda: ncnn_mp.Allocator(arena=crowded))
check("spare without a plan", lambda: ncnn_mp.Allocator(arena=1024, spare=64))
check("spare negative", lambda: ncnn_mp.Allocator(arena=plan, spare=-1))
check("plan of a str", lambda: ncnn_mp.Allocator(arena="x"))

# Mistakes.
check("arena 0", lambda: ncnn_mp.Allocator(arena=0))
check("arena -1", lambda: ncnn_mp.Allocator(arena=-1))
check("arena str", lambda: ncnn_mp.Allocator(arena="64k"))
check("arena and counting", lambda: ncnn_mp.Allocator(arena=1024, counting=True))
check("arena and unlocked", lambda: ncnn_mp.Allocator(True, arena=1024))
check("size is read-only", lambda: setattr(ncnn_mp.Allocator(arena=1024), "size", 1))
print("a pool's size:", ncnn_mp.Allocator().size)

# Two threads, one arena: each extract's blocks from it, the outputs the default's.
if _thread is not None:
    shared = ncnn_mp.Allocator(arena=4 * need)
    # (each thread's result in a slot made beforehand: without a GIL, a list a thread grows while
    # another collects can lose its new storage, tests/mp/gc_settled.py)
    results = [None, None]

    def worker(t):
        ok = 0
        for _ in range(10):
            ok += run(shared).to_bytes() == want
        results[t] = ok

    for t in range(2):
        _thread.start_new_thread(worker, (t,))
    while None in results:
        pass
    gc.collect()
    print("two threads:", results, "in use after:", shared.in_use)
else:
    print("two threads: [10, 10] in use after: 0")

# SPDX-License-Identifier: MIT
# SDPA's mask (attn_mask, 5=1: a fourth input added to each head's scores) and kv cache
# (kv_cache, 7=1: past key and value copied whole into caches of the current key's and value's
# shape) are checked against the query and keys: ncnn read a mask narrower or shorter than the
# scores, or with fewer heads, past its end, and copied a past key or value of another width,
# heads or length past the cache it made. Refused now naming the layer and the input; inputs
# that fit run as before. (A past cache is meant to be the one SDPA handed back: ncnn's x86 cache
# copies whole panels of rows, past the rows of a hand-made one whose rows are not a multiple:
# docs/limits.md.)
import ncnn_mp
from mptest import check, packed, require

require("NCNN_STRING")
try:
    ncnn_mp.Layer("SDPA")
except ValueError:
    print("SKIP: this firmware's ncnn leaves out SDPA")
    raise SystemExit

opt = ncnn_mp.Option()
opt.num_threads = 1


def filled(*shape, value=0.25):
    m = ncnn_mp.Mat(*shape)
    m.fill(value)
    return m


def sdpa(mask, cache):
    lay = ncnn_mp.Layer("SDPA")
    pd = ncnn_mp.ParamDict()
    pd.set(5, 1 if mask else 0)
    pd.set(7, 1 if cache else 0)
    lay.load_param(pd)
    return lay


def run(label, lay, inputs, n_top):
    check(label, lambda: print(label, "runs:", [(t.w, t.h, t.c) for t in lay.forward(inputs, n_top, opt)]))


q, k, v = filled(4, 3, 4), filled(4, 5, 2), filled(6, 5, 2)  # 4 heads in 2 groups; 3 queries, 5 keys
print("-- mask")
lay = sdpa(True, False)
run("mask 5x3", lay, [q, k, v, filled(5, 3)], 1)
run("mask 5x3x4", lay, [q, k, v, filled(5, 3, 4)], 1)
run("mask 4x3 (narrower than the keys)", lay, [q, k, v, filled(4, 3)], 1)
run("mask 5x2 (fewer rows than queries)", lay, [q, k, v, filled(5, 2)], 1)
run("mask 5x3x2 (fewer heads)", lay, [q, k, v, filled(5, 3, 2)], 1)
print("-- kv cache (16 past rows: ncnn's x86 cache copies whole panels of 8 or 16 rows)")
lay = sdpa(False, True)
run("past 4x16x2, 6x16x2", lay, [q, k, v, filled(4, 16, 2), filled(6, 16, 2)], 3)
run("past key 3 wide", lay, [q, k, v, filled(3, 16, 2), filled(6, 16, 2)], 3)
run("past key of 3 heads", lay, [q, k, v, filled(4, 16, 3), filled(6, 16, 2)], 3)
run("past value 8 wide", lay, [q, k, v, filled(4, 16, 2), filled(8, 16, 2)], 3)
run("past value of 4 rows", lay, [q, k, v, filled(4, 16, 2), filled(6, 4, 2)], 3)
print("-- mask and kv cache")
lay = sdpa(True, True)
run("mask 21x3, past of 16", lay, [q, k, v, filled(21, 3), filled(4, 16, 2), filled(6, 16, 2)], 3)
run("mask 20x3, past of 16 (narrower than past and current keys)", lay, [q, k, v, filled(20, 3), filled(4, 16, 2),
                                                                         filled(6, 16, 2)], 3)
print("done")

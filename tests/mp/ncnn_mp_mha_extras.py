# SPDX-License-Identifier: MIT
# A MultiHeadAttention's key, value, mask and kv cache are checked against its parameters and
# its query: ncnn read key and value rows kdim and vdim wide and as many value rows as key rows
# unchecked (past a narrower or shorter blob), added a mask narrower or shorter than the scores
# past its end, and copied a past key or value of more heads than the layer has past the cache
# it made (heap corruption). Refused now naming the layer and the input; inputs that fit run.
import ncnn_mp
from mptest import require

require("NCNN_STRING")
try:
    ncnn_mp.Layer("MultiHeadAttention")
except ValueError:
    print("SKIP: this firmware's ncnn leaves out MultiHeadAttention")
    raise SystemExit

opt = ncnn_mp.Option()
opt.num_threads = 1
EMBED, HEADS, QDIM, KDIM, VDIM = 4, 2, 4, 3, 5


def filled(*shape, value=0.25):
    m = ncnn_mp.Mat(*shape)
    m.fill(value)
    return m


def mha(mask, cache):
    lay = ncnn_mp.Layer("MultiHeadAttention")
    pd = ncnn_mp.ParamDict()
    for k, v in ((0, EMBED), (1, HEADS), (2, EMBED * QDIM), (3, KDIM), (4, VDIM), (5, int(mask)), (7, int(cache))):
        pd.set_int(k, v)
    lay.load_param(pd)
    weights = [EMBED * QDIM, EMBED, EMBED * KDIM, EMBED, EMBED * VDIM, EMBED, QDIM * EMBED, QDIM]
    lay.load_model(ncnn_mp.ModelBin(from_mat_array=[filled(n, value=0.125) for n in weights]))
    return lay


def run(label, lay, inputs, n_top):
    try:
        print(label, "runs:", [(t.w, t.h, t.c) for t in lay.forward(inputs, n_top, opt)])
    except ValueError as e:
        print(label, "-> ValueError:", e)


q, k, v = filled(QDIM, 2), filled(KDIM, 3), filled(VDIM, 3)  # 2 queries, 3 keys
print("-- q, k, v")
lay = mha(False, False)
run("q 4x2, k 3x3, v 5x3", lay, [q, k, v], 1)
run("k 2 wide (kdim 3)", lay, [q, filled(2, 3), v], 1)
run("v 4 wide (vdim 5)", lay, [q, k, filled(4, 3)], 1)
run("v of 2 rows (3 keys)", lay, [q, k, filled(VDIM, 2)], 1)
run("q as k and v (kdim 3, q 4 wide)", lay, [q], 1)
run("k of 3 dims", lay, [q, filled(KDIM, 3, 2), v], 1)
print("-- mask")
lay = mha(True, False)
run("mask 3x2", lay, [q, k, v, filled(3, 2)], 1)
run("mask 3x2x2", lay, [q, k, v, filled(3, 2, 2)], 1)
run("mask 2x2 (narrower than the keys)", lay, [q, k, v, filled(2, 2)], 1)
run("mask 3x1 (fewer rows than queries)", lay, [q, k, v, filled(3, 1)], 1)
run("mask 3x2x3 (3 heads of 2)", lay, [q, k, v, filled(3, 2, 3)], 1)
print("-- kv cache")
lay = mha(False, True)
run("past 2x4x2, 2x4x2", lay, [q, k, v, filled(2, 4, 2), filled(2, 4, 2)], 3)
run("past key 3 wide (a head is 2)", lay, [q, k, v, filled(3, 4, 2), filled(2, 4, 2)], 3)
run("past key of 3 heads", lay, [q, k, v, filled(2, 4, 3), filled(2, 4, 2)], 3)
run("past value of 40 rows", lay, [q, k, v, filled(2, 4, 2), filled(2, 40, 2)], 3)
print("-- mask and kv cache")
lay = mha(True, True)
# (k given apart from q: cross-attention, whose keys with a past are the past's alone)
run("mask 4x2, past of 4", lay, [q, k, v, filled(4, 2), filled(2, 4, 2), filled(2, 4, 2)], 3)
run("mask 7x2, past of 4 (past and current keys)", lay, [q, k, v, filled(7, 2), filled(2, 4, 2), filled(2, 4, 2)], 3)
print("done")

# SPDX-License-Identifier: MIT
# RotaryEmbed reads row i of its cos and sin tables (inputs 1 and 2) for every position i of its
# input, half the input's width of each (or all of it where the cos table is that wide): ncnn
# reads them unchecked, past a table narrower or shorter than that. Refused now naming the
# layer and the table; tables that cover the input run as before.
import ncnn_mp
from mptest import check, packed, require

require("NCNN_STRING")
try:
    ncnn_mp.Layer("RotaryEmbed")
except ValueError:
    print("SKIP: this firmware's ncnn leaves out RotaryEmbed")
    raise SystemExit

opt = ncnn_mp.Option()
opt.num_threads = 1


def filled(*shape, value=0.5):
    m = ncnn_mp.Mat(*shape)
    m.fill(value)
    return m


def rotary(interleaved):
    lay = ncnn_mp.Layer("RotaryEmbed")
    pd = ncnn_mp.ParamDict()
    pd.set(0, interleaved)
    lay.load_param(pd)
    return lay


x = filled(8, 5, 2)  # embed_dim 8, seqlen 5, 2 heads
for interleaved in (0, 1):
    lay = rotary(interleaved)
    s = 0.25  # (sin: the rotated values are not zero, whose sign FMA and valgrind's float differ on)
    for label, cos, sin in (("tables 4x5", filled(4, 5), filled(4, 5, value=s)),
                            ("tables 8x5", filled(8, 5), filled(8, 5, value=s)),
                            ("cos 3x5", filled(3, 5), filled(4, 5, value=s)),
                            ("sin 4x4", filled(4, 5), filled(4, 4, value=s)),
                            ("cos 8x5, sin 4x5", filled(8, 5), filled(4, 5, value=s)),
                            ("vector tables of 4", filled(4), filled(4, value=s))):
        check("interleaved %d, %s" % (interleaved, label),
              lambda: print("interleaved %d, %s runs:" % (interleaved, label), packed(lay.forward([x, cos, sin], 1, opt)[0])[:4]))
print("done")

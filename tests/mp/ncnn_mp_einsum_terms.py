# SPDX-License-Identifier: MIT
# An Einsum's inputs are checked against its terms: ncnn indexes each input by its term's
# letters, a dim each, with each letter's extent from the last input that has it, and its
# trace (ii) reads a matrix's diagonal. An input with more dims than its term has letters was
# indexed through the term's end; a letter longer in one input read past the others; a trace
# of a matrix taller than wide read past it. Refused now naming the layer and the input.
import ncnn_mp
from mptest import packed, require, tried

require("NCNN_STRING")
try:
    ncnn_mp.Layer("Einsum")
except ValueError:
    print("SKIP: this firmware's ncnn leaves out Einsum")
    raise SystemExit

opt = ncnn_mp.Option()
opt.num_threads = 1


def filled(*shape, value=0.5):
    m = ncnn_mp.Mat(*shape)
    m.fill(value)
    return m


def einsum(equation, inputs):
    """A Net of one Einsum of `equation` over inputs x0, x1, ...; its output for `inputs`."""
    names = ["x%d" % i for i in range(len(inputs))]
    codes = ",".join(str(ord(ch)) for ch in equation)
    lines = ["7767517", "%d %d" % (len(inputs) + 1, len(inputs) + 1)]
    lines += ["Input %s 0 1 %s" % (n, n) for n in names]
    lines.append("Einsum ein %d 1 %s out -23300=%d,%s" % (len(inputs), " ".join(names), len(equation), codes))
    net = ncnn_mp.Net()
    net.opt = opt
    net.load_param("\n".join(lines).encode())
    net.load_model(b"")
    with net.create_extractor() as ex:
        for n, x in zip(names, inputs):
            ex.input(n, x)
        return ex.extract("out")


for label, equation, inputs in (
        ("ik,kj->ij of 3x2, 4x3", "ik,kj->ij", (filled(3, 2), filled(4, 3))),
        ("ik,kj->ij of 3x2, 4x5 (k 3 and 5)", "ik,kj->ij", (filled(3, 2), filled(4, 5))),
        ("ik,kj->ij of 3x2x2, 4x3 (a 3-dim input)", "ik,kj->ij", (filled(3, 2, 2), filled(4, 3))),
        ("ik,kj->ij of 3, 4x3 (a vector)", "ik,kj->ij", (filled(3), filled(4, 3))),
        ("i,i->i of 4, 4", "i,i->i", (filled(4), filled(4))),
        ("ii of 3x3", "ii", (filled(3, 3),)),
        ("ii of 2x3 (taller than wide)", "ii", (filled(2, 3),))):
    tried(label, lambda: einsum(equation, inputs))
print("done")

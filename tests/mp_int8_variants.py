# SPDX-License-Identifier: MIT
# Param variants of int8 models (tests/test_int8_chain.py::test_int8_terms_fuzzed): each
# loaded over the model's own weights and run once. Every one must load and run, or raise a
# Python exception; the process must get to "done".
#   micropython mp_int8_variants.py VARIANTS BIN INPUT W H C OUT...
# VARIANTS: param texts separated by a line "---".
import sys

import ncnn_mp

def variants(path):
    """The param texts one at a time (the Unix port's heap holds a few, not all)."""
    lines = []
    with open(path) as f:
        for line in f:
            if line.rstrip("\n") == "---":
                yield "".join(lines)
                lines = []
            else:
                lines.append(line)
    yield "".join(lines)


weights = open(sys.argv[2], "rb").read()
in_name, w, h, c, outs = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), sys.argv[7:]
counts = {}
for text in variants(sys.argv[1]):
    net = ncnn_mp.Net()
    net.opt.num_threads = 1
    try:
        net.load_param_mem(text)
        net.load_model(weights)
        x = ncnn_mp.Mat(w, h, c)
        x.fill(0.5)
        with net.create_extractor() as ex:
            ex.input(in_name, x)
            for name in outs:
                ex.extract(name)
        kind = "ran"
    except (ValueError, MemoryError, RuntimeError) as e:
        kind = type(e).__name__
    counts[kind] = counts.get(kind, 0) + 1
    net.close()
print(sorted(counts.items()))
print("done")

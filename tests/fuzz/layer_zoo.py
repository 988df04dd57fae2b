# SPDX-License-Identifier: MIT
# The layer zoo (run by tests/test_layer_zoo.py on the Unix firmware, plain and under
# valgrind): every layer type ncnn registers, made standalone, given its default parameters
# and then random ones, weights from an endless reader of zeros, and forwards of 0 to 3
# inputs of several shapes asking 1 to 3 outputs. Every call must raise or return: the
# process must never crash, and valgrind must report nothing.
#
#   micropython layer_zoo.py SEED TRIALS     prints a line per outcome kind, then "done"
import struct
import sys

import ncnn_mp

try:
    import random
except ImportError:
    print("SKIP: no random module")
    raise SystemExit

LAYER_TYPES = 110  # (ncnn 1.0.20261020's registry: typeindex 0..109)
VALUES = (-233, -234, -1, 0, 0, 1, 1, 2, 3, 4, 5, 8)
FLOATS = (-1.0, 0.0, 0.5, 1.0, 2.0)

seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
trials = int(sys.argv[2]) if len(sys.argv) > 2 else 6
trace = len(sys.argv) > 3  # (each step printed before it runs: the last line names a crash)
random.seed(seed)
opt = ncnn_mp.Option()
opt.num_threads = 1
outcomes = {}


def note(step, what):
    key = step + " " + what
    outcomes[key] = outcomes.get(key, 0) + 1


def attempt(step, f):
    if trace:
        print("trace", step, context)
    try:
        r = f()
    except Exception as e:  # (every mistake is an exception; which one does not matter here)
        note(step, type(e).__name__)
        return None
    note(step, "ok")
    return r


def int_array(n):
    """An int array parameter (ncnn keeps them in a Mat of ints; rows padded to 16 bytes)."""
    values = [random.choice(VALUES) for _ in range(n)] + [0] * ((-n) % 4)
    return ncnn_mp.Mat(n, data=struct.pack("<%di" % len(values), *values))


def params():
    pd = ncnn_mp.ParamDict()
    for _ in range(random.randint(1, 8)):
        key = random.randint(0, 24)
        kind = random.random()
        if kind < 0.7:
            value = random.choice(VALUES)
        elif kind < 0.9:
            value = random.choice(FLOATS)
        else:
            value = int_array(random.randint(1, 4))
        pd.set(key, value)
        context.append((key, value if not isinstance(value, ncnn_mp.Mat) else "array"))
    return pd


def blob():
    dims = random.randint(1, 4)
    shape = [random.randint(1, 6) for _ in range(dims)]
    context.append(shape)
    m = ncnn_mp.Mat(*shape)
    m.fill(random.choice(FLOATS))
    return m


context = []
for typeindex in range(LAYER_TYPES):
    for trial in range(trials):
        context = [typeindex]
        layer = attempt("make", lambda: ncnn_mp.Layer(typeindex=typeindex))
        if layer is None:
            break
        pd = ncnn_mp.ParamDict() if trial == 0 else params()
        if attempt("load_param", lambda: layer.load_param(pd)) is None and random.random() < 0.5:
            continue
        attempt("load_model", lambda: layer.load_model(ncnn_mp.ModelBin(from_datareader=ncnn_mp.DataReader(zeros=True))))
        for _ in range(3):
            n = random.randint(0, 3)
            inputs = [blob() for _ in range(n)]
            n_top = random.randint(1, 3)
            context.append(("n_top", n_top))
            if n == 1 and n_top == 1 and random.random() < 0.5:
                attempt("forward", lambda: layer.forward(inputs[0], opt))
            elif random.random() < 0.2:
                attempt("forward_inplace", lambda: layer.forward_inplace(inputs if n != 1 else inputs[0], opt))
            else:
                attempt("forward", lambda: layer.forward(inputs, n_top, opt))
        layer = None

for key in sorted(outcomes):
    print(key, outcomes[key])
print("done")

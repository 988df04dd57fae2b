# SPDX-License-Identifier: MIT
# Extractor.extract(blob, hook=f): f(index, name, type, count) before each layer the shape guard
# checks; what f raises stops the extract and comes out of it, the Extractor and the Net usable.
import gc

import ncnn_mp
from mptest import check, mat, packed, require

require("NCNN_STRING")  # a text param, layer names


class Double(ncnn_mp.Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, opt):
        out = bottom.clone()
        for i in range(len(out)):
            out[i] *= 2
        return out


PARAM = """7767517
7 8
Input data 0 1 data
ReLU r0 1 1 data a
Split sp 1 2 a b c
ReLU r1 1 1 b d 0=0.5
Sigmoid s 1 1 c e
Double py 1 1 e f
BinaryOp add 2 1 d f out 0=0
"""


def make_net():
    net = ncnn_mp.Net()
    net.register_custom_layer("Double", Double)
    net.load_param_mem(PARAM)
    net.load_model(ncnn_mp.DataReader(zeros=True))
    return net


def extractor(net):
    ex = net.create_extractor()
    ex.input("data", mat(-2, -1, 0, 1, 2))
    return ex


net = make_net()
plain = packed(extractor(net).extract("out"))
print("no hook", plain)

# Progress: the layers as ncnn runs them (a blob's producers first); Input, Split and the
# Python layer are not the guard's and are not reported.
log = []
out = extractor(net).extract("out", hook=lambda *a: log.append(a))
print("hooked", packed(out) == plain)
for entry in log:
    print(" ", entry)
print("hook=None", packed(extractor(net).extract("out", hook=None)) == plain)

# A blob already there runs nothing: no calls. One lightmode freed once its consumer ran is
# computed again, and its layers are reported again.
ex = extractor(net)
ex.extract("out")
log = []
ex.extract("out", hook=lambda *a: log.append(a))
print("out again", log)
ex.extract("d", hook=lambda *a: log.append(a[1]))
print("d after out", log)


# Cancel: the exception comes out of extract, the layers after it did not run, and the same
# Extractor (and a new one) still gives the right result.
class Cancel(Exception):
    pass


def cancel_at(name, seen):
    def hook(index, layer, type, count):
        seen.append(layer)
        if layer == name:
            raise Cancel("stopped before " + layer)
    return hook


def cancelled(label, f):
    """Run f, which should raise the hook's Cancel out of extract (the user's own exception)."""
    try:
        f()
    except Cancel as e:
        print(label, "raised the hook's Cancel:", e.args[0])
    else:
        print(label, "raised nothing")


ex = extractor(net)
seen = []
cancelled("cancel at r1", lambda: ex.extract("out", hook=cancel_at("r1", seen)))
print("ran before the cancel", seen)
print("same extractor after", packed(ex.extract("out")) == plain)
print("new extractor after", packed(extractor(net).extract("out")) == plain)
ex = extractor(net)
cancelled("cancel at the last", lambda: ex.extract("out", hook=cancel_at("add", [])))
print("again with a hook", packed(ex.extract("out", hook=lambda *a: None)) == plain)

# Mistakes: not callable, the wrong arity, a hook that uses what is running.
ex = extractor(net)
check("hook=3", lambda: ex.extract("out", hook=3))
try:  # (MicroPython's message for it differs between builds)
    ex.extract("out", hook=lambda: None)
except TypeError:
    print("hook of no arguments -> TypeError")
ex = extractor(net)
check("extract inside the hook", lambda: ex.extract("out", hook=lambda *a: ex.extract("out")))
ex = extractor(net)
check("close inside the hook", lambda: ex.extract("out", hook=lambda *a: ex.close()))
ex = extractor(net)
check("clear inside the hook", lambda: ex.extract("out", hook=lambda *a: net.clear()))
print("net after", packed(extractor(net).extract("out")) == plain)

# What a hook may do: collect, run another net (whose hook is its own), keep its arguments.
other = make_net()
outer, inner = [], []


def nested(index, name, type, count):
    outer.append(name)
    gc.collect()
    if name == "r1":
        extractor(other).extract("d", hook=lambda i, n, t, c: inner.append(n))


print("nested", packed(extractor(net).extract("out", hook=nested)) == plain, outer, inner)

# Many cancelled extracts: nothing kept (the heap's free bytes come back).
def cancelled():
    e = extractor(net)
    try:
        e.extract("out", hook=cancel_at("s", []))
    except Cancel:
        pass


for _ in range(5):
    cancelled()
gc.collect()
before = gc.mem_free()
for _ in range(200):
    cancelled()
gc.collect()
print("heap kept by 200 cancels under 1 KiB", before - gc.mem_free() < 1024)

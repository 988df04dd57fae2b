# SPDX-License-Identifier: MIT
# Every public callable called wrongly: too many positional arguments, too few, an unknown
# keyword, and (through the class) a wrong self. Each mistake raises with a message that
# names the call ("Class.method: ", "Class(): ", "ncnn_mp.function: "); tests/test_errors.py
# checks every message here has that prefix. New methods are covered as they are added:
# the names come from dir().
import struct

import ncnn_mp
from mptest import check

INPUT = 16  # ncnn's LayerType::Input (builds without NCNN_STRING cannot look it up)


def loaded_net():
    # One Input layer from a binary param (no layer names needed), weights of zeros.
    net = ncnn_mp.Net()
    net.load_param_bin(struct.pack("<7i", 7767517, 1, 1, INPUT, 0, 1, 0) + struct.pack("<i", -233))
    net.load_model(ncnn_mp.DataReader(zeros=True))
    return net


# How to make a fresh instance of each class (a fresh one per call: some calls succeed,
# close() or __del__() among them).
SAMPLES = {
    "Allocator": lambda: ncnn_mp.Allocator(),
    "Option": lambda: ncnn_mp.Option(),
    "Mat": lambda: ncnn_mp.Mat(2),
    "DataReader": lambda: ncnn_mp.DataReader(zeros=True),
    "Net": lambda: ncnn_mp.Net(),
    "ParamDict": lambda: ncnn_mp.ParamDict(),
    "ModelBin": lambda: ncnn_mp.ModelBin(from_mat_array=[]),
    "Layer": lambda: ncnn_mp.Layer(),
    "Extractor": lambda: loaded_net().create_extractor(),
}
DUNDERS = ("__del__", "__enter__", "__exit__")
MANY = [0] * 20


def wrongly(label, make):
    """Calls make() three wrong ways: too many, no arguments, an unknown keyword."""
    check(label + " too many", lambda: make()(*MANY))
    check(label + " none", lambda: make()())
    check(label + " unknown keyword", lambda: make()(no_such_keyword=1))


classes = sorted(n for n in dir(ncnn_mp) if not n.startswith("_") and type(getattr(ncnn_mp, n)) is type)
missing = [c for c in classes if c not in SAMPLES]
print("classes", classes, "without a sample", missing)

for name in sorted(n for n in dir(ncnn_mp) if not n.startswith("_")):
    f = getattr(ncnn_mp, name)
    if callable(f) and type(f) is not type:
        wrongly("ncnn_mp.%s" % name, lambda f=f: f)

for cls_name in classes:
    cls = getattr(ncnn_mp, cls_name)
    # The constructor.
    check(cls_name + "() too many", lambda: cls(*MANY))
    check(cls_name + "() none", lambda: cls())
    check(cls_name + "() unknown keyword", lambda: cls(no_such_keyword=1))
    sample = SAMPLES[cls_name]
    names = sorted(n for n in dir(cls) if not n.startswith("_") or n in DUNDERS)
    for name in names:
        if not callable(getattr(sample(), name)):
            continue  # a constant (Mat.PIXEL_RGB, ...)
        label = "%s.%s" % (cls_name, name)
        wrongly(label, lambda name=name: getattr(sample(), name))
        # Through the class, with something else than an instance as self (a static
        # method takes it as its first argument, a class method as its second).
        check(label + " on None", lambda name=name: getattr(cls, name)(None))

# A Python subclass's instance given as self through the class: its native object is
# used, as a bound method would use it.
class Sub(ncnn_mp.Mat):
    pass


s = Sub(2)
ncnn_mp.Mat.fill(s, 3.0)
print("subclass through the class", list(ncnn_mp.Mat.clone(s).to_bytes()) == list(s.to_bytes()), s.clone()[1])

# Attributes that cannot be set or deleted say so, naming Class.attr.
def store(obj, name, value):
    setattr(obj, name, value)


check("Mat.w set", lambda: store(ncnn_mp.Mat(2), "w", 3))
check("Net.input_count set", lambda: store(ncnn_mp.Net(), "input_count", 3))
check("Net.opt del", lambda: delattr(ncnn_mp.Net(), "opt"))
check("Layer.typeindex set", lambda: store(ncnn_mp.Layer(), "typeindex", 3))
check("Layer.support_inplace del", lambda: delattr(ncnn_mp.Layer(), "support_inplace"))
check("Option.num_threads del", lambda: delattr(ncnn_mp.Option(), "num_threads"))

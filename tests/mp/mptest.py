# Helpers the MicroPython-side test scripts share (not a test: no ncnn_mp_ prefix).
import os
import sys

import ncnn_mp

sys.path.append("../../examples")
from digits_layers import Standardize  # noqa: E402  (the digits model's Python layer)


def check(label, f):
    """Run f and print the exception it raises (type and message), or that none was raised."""
    try:
        f()
    except Exception as e:
        print(label, "->", type(e).__name__ + ":", e)
    else:
        print(label, "-> no error")


def digits_net():
    """An empty Net that knows the digits model's custom layer."""
    n = ncnn_mp.Net()
    n.register_custom_layer("Standardize", Standardize)
    return n


DIGITS = os.getenv("NCNN_MP_DIGITS") or "../../build/models/digits"
DIGITS_PARAM = DIGITS + "/digits.param"
DIGITS_MODEL = DIGITS + "/digits.bin"


def read(path):
    with open(path, "rb") as f:
        return f.read()

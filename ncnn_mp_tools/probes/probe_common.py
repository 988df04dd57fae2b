# SPDX-License-Identifier: MIT
# What the device-side probes of `make preflight` and `make compare` share (device.py runs
# `ROOT = ...`, `CONFIG = {...}`, this, then the probe): reading a file as a board does, and
# loading a model as a board would, its weights in place.
import ncnn_mp

try:
    import qemu_board  # a QEMU board: ncnn's C heap and a timer (-icount shift=0: 1 instruction per ns)
except ImportError:
    qemu_board = None


def read(path):
    if qemu_board:
        return memoryview(open(path, "rb"))  # in the board's flash: nothing copied
    with open(path, "rb") as f:
        return f.read()


def load(net, model, copy=False):
    """model: {"param": path, "bin": path, "binary_param": bool}."""
    param = read(model["param"])
    if model["binary_param"]:
        net.load_param_bin(param)
    else:
        net.load_param(ncnn_mp.DataReader(from_memory=param))
    net.load_model(read(model["bin"]), copy=copy)

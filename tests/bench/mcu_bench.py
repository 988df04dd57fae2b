# SPDX-License-Identifier: MIT
# MicroPython side of `make mcu-report` (tests/bench/mcu_report.py sends it to the QEMU
# firmware): per model, what the extract costs in emulated instructions (QEMU -icount
# shift=0: the board's time in ns is the instruction count), ncnn's C heap and the
# MicroPython heap. Prints one line of JSON per model.
import gc

import ncnn_mp
import qemu_board
from mptest import DIGITS, DIGITS_MODEL, Standardize, read

RUNS = 20


def mnist_param():
    try:
        return bytes(read("mnist.param")).decode()
    except OSError:  # not in the board's ROMFS: this machine has no ../shared/models
        return None


def measure(name, net, inp, out, x):
    with net.create_extractor() as ex:  # warm-up: ncnn sizes its pools
        ex.input(inp, x)
        result = ex.extract(out)
    gc.collect()
    live_heap = gc.mem_alloc()
    gc.disable()
    before = gc.mem_alloc()
    t0 = qemu_board.time_ns()
    for _ in range(RUNS):
        with net.create_extractor() as ex:
            ex.input(inp, x)
            result = ex.extract(out)
    ns = qemu_board.time_ns() - t0
    per_extract_heap = (gc.mem_alloc() - before) // RUNS
    gc.enable()
    in_use, peak, size = qemu_board.c_heap()
    print('{"model": "%s", "instructions": %d, "c_heap_in_use": %d, "c_heap_peak": %d, '
          '"c_heap_size": %d, "py_heap_live": %d, "py_heap_per_extract": %d, "out_w": %d}'
          % (name, ns // RUNS, in_use, peak, size, live_heap,
             per_extract_heap, result.w))


digits = ncnn_mp.Net()
digits.register_custom_layer(ncnn_mp.CUSTOM_BIT | 0, Standardize)
digits.load_param_bin(read(DIGITS + "/digits.param.bin"))
digits.load_model(read(DIGITS_MODEL))
x = ncnn_mp.Mat(8, 8, 1)
x.fill(8.0)
measure("digits MLP (Python Standardize layer)", digits, 0, 5, x)
digits.close()

text = mnist_param()
if text is not None and ncnn_mp.build_info()["NCNN_STRING"]:
    mnist = ncnn_mp.Net()
    mnist.load_param(ncnn_mp.DataReader(from_memory=text))
    mnist.load_model(read("mnist.bin"))
    x = ncnn_mp.Mat(28, 28, 1)
    x.fill(0.5)
    measure("MNIST CNN", mnist, "data", "fc", x)
    mnist.close()

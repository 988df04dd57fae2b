# SPDX-License-Identifier: MIT
# Helpers the MicroPython-side test scripts share (not a test: no ncnn_mp_ prefix).
import gc
import os
import struct
import sys

import ncnn_mp

# (examples/ is on MICROPYPATH, which the harness sets: tests/conftest.py; a board has it frozen in)
from digits_layers import Standardize  # the digits model's Python layer

# A bare-metal board (the QEMU firmware) has no environment; the files the scripts read
# are in its flash, a ROMFS mounted at /rom (ci/firmware.py packs them, by base name).
ON_MCU = not hasattr(os, "getenv")
getenv = (lambda name: None) if ON_MCU else os.getenv


def check(label, f):
    """Run f and print the exception it raises (type and message), or that none was raised."""
    try:
        f()
    except Exception as e:
        print(label, "->", type(e).__name__ + ":", e)
    else:
        print(label, "-> no error")


def tried(label, f):
    """Run f, which makes a Mat: print its shape (dims, w, h, c) and first values, or the
    exception it raised."""
    try:
        out = f()
    except Exception as e:
        print(label, "->", type(e).__name__ + ":", e)
    else:
        print(label, "->", (out.dims, out.w, out.h, out.c), packed(out)[:4])


def mat(*xs):
    """A 1-D Mat holding xs."""
    m = ncnn_mp.Mat(len(xs))
    for i, x in enumerate(xs):
        m[i] = x
    return m


def packed(m):
    """A float32 Mat's elements in order, channel padding left out, rounded to 4 places."""
    data = m.to_bytes()
    return [round(x, 4) for x in struct.unpack("<%df" % (len(data) // 4), data)]


def scrub(depth=None):
    """Overwrite the C stack below the caller: the GC scans it conservatively, and words
    left over from earlier calls would otherwise keep dropped Nets alive. (No try/except
    here: nlr's saved registers would write stale pointers onto the stack. Shallower under
    the sanitizers: ASan's larger frames reach the Unix port's stack limit sooner.)"""
    if depth is None:
        depth = 6 if getenv("NCNN_MP_SANITIZED") else 40
    return scrub(depth - 1) + 1 if depth else 0


# How many dropped Nets the conservative GC may still find through stale words on the C
# stack or in saved registers. Which words, and so how many, depends on code and path
# layout (a clean clone in another folder held three): a leak check allows this many
# and no more, where a real leak leaves every Net of the loop (20 to 100). Under the
# sanitizers 4 to 5 were seen whatever the scrub depth (words scrub cannot reach:
# registers the collection saves, ASan's larger frames); the leak counts that matter
# are the plain and valgrind runs'.
STALE_NETS = 8 if getenv("NCNN_MP_SANITIZED") else 3


def judged(what, value, allowed, unit=""):
    """A leak or growth check: whether value <= allowed. The verdict goes where the caller
    prints it (the .exp holds it exactly); the numbers it judged go to stderr, which a failing
    test shows, and to stdout as well when the check fails (a board has one stream)."""
    text = "%s: %s%s (allowed <= %s%s)" % (what, value, unit, allowed, unit)
    if value > allowed:
        print(text)
    elif not ON_MCU:
        sys.stderr.write(text + "\n")
    return value <= allowed


def settle():
    """Collect everything unreachable; return how many Python layers ncnn still holds."""
    scrub()
    for _ in range(3):
        gc.collect()
    return ncnn_mp.live_custom_layers()


def digits_net():
    """An empty Net that knows the digits model's custom layer."""
    n = ncnn_mp.Net()
    n.register_custom_layer("Standardize", Standardize)
    return n


# Under valgrind or the sanitizers the process's RSS is the tool's own: the C-memory
# checks are the plain run's (those runs check leaks their own way).
MEMORY_IS_TOOLS = getenv("NCNN_MP_UNDER_VALGRIND") == "1" or bool(getenv("NCNN_MP_SANITIZED"))

DIGITS = getenv("NCNN_MP_DIGITS") or "../../build/models/digits"
DIGITS_PARAM = DIGITS + "/digits.param"
DIGITS_MODEL = DIGITS + "/digits.bin"


def require(*flags):
    """Skip the script (print SKIP, stop) unless ncnn was built with every flag, e.g.
    require("NCNN_STRING") in a script that uses layer or blob names."""
    info = ncnn_mp.build_info()
    missing = [f for f in flags if not info[f]]
    if missing:
        print("SKIP: needs ncnn built with", " ".join(missing))
        raise SystemExit


def require_mat_helpers():
    """Skip the script unless ncnn has every layer Mat's helpers run (Bias, Scale, Padding,
    Crop, Packing, Flatten: small MCU builds leave some out, and the helpers then raise
    NotImplementedError)."""
    m, opt = ncnn_mp.Mat(2, 2, 1), ncnn_mp.Option()
    m.fill(1.0)
    try:
        m.substract_mean_normalize([0.0], None)
        m.substract_mean_normalize(None, [1.0])
        m.copy_make_border(1, 1, 1, 1, 0, 0.0, opt)
        m.copy_cut_border(0, 0, 0, 0, opt)
        m.convert_packing(1, opt)
        m.flatten(opt)
    except NotImplementedError as e:
        print("SKIP:", e)
        raise SystemExit


def c_memory_kib():
    """The process's C-side memory: RSS on Unix, newlib's heap in use (ncnn's memory) on
    the MCU. KiB."""
    if ON_MCU:
        import qemu_board

        return qemu_board.c_heap()[0] // 1024
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


def read(path):
    """A file's bytes where a board keeps them: on the MCU a read-only memoryview of the
    ROMFS file in flash (nothing copied into the Python heap), elsewhere bytes read from it."""
    if ON_MCU:
        return memoryview(open("/rom/" + path.rsplit("/", 1)[-1], "rb"))
    with open(path, "rb") as f:
        return f.read()

"""The C++ seam on the desktop, where ncnn throws: what a layer's forward throws (a failing
`new`, an array of negative length) was std::terminate, SIGABRT, from extract and from a
standalone Layer.forward. Now std::bad_alloc is MemoryError and std::bad_array_new_length a
ValueError, each naming the call and the layer; the Net, the Extractor and the process work
on afterwards. The cases are ones the shape guard's rules let through (tests/mp's
ncnn_mp_interp_size.py has those the rules refuse): an Interp whose output size comes from an
expression, and an allocation that fails under an address-space limit, as on a device."""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import pytest

from conftest import MicroPython

# An Interp whose size expression (param 9) gives an output 2^30 - 1 wide: ncnn's x86 Interp
# counts its coefficient buffer (3 ints a column and row) in int, which wraps negative, and asks
# `new int[]` for that. (A negative size from the expression itself is the shape guard's
# refusal now: ncnn_mp_shape_expr.py.)
NEGATIVE_EXPR = """
import ncnn_mp
net = ncnn_mp.Net()
net.opt.num_threads = 1
net.load_param(b'''7767517
4 5
Input data 0 1 data 0=4 1=4 2=1
Split split 1 2 data a b
Interp up 1 1 a up 0=2 9="1073741823,1"
ReLU relu 1 1 b relu
''')
net.load_model(b"")
x = ncnn_mp.Mat(4, 4, 1)
x.fill(1.0)
with net.create_extractor() as ex:
    ex.input("data", x)
    for blob in ("up", "relu", "up"):
        try:
            out = ex.extract(blob)
            print(blob, "->", out.w, out.h, out.c)
        except Exception as e:
            print(blob, "->", type(e).__name__ + ":", e)
print("done")
"""

THREW_SIZE = ("Extractor.extract: layer 'up' (Interp) asked for an array of negative or impossible size "
              "(ncnn threw std::bad_array_new_length: parameters or input out of range)")


@pytest.mark.parametrize("firmware", ["micropython", "micropython_memcheck"])
def test_layer_that_throws_names_itself(request: pytest.FixtureRequest, firmware: str) -> None:
    """Also under valgrind (the memcheck firmware, ncnn_mp's kernels): the exception unwinds
    ncnn's frames and frees what they held, with no report."""
    mp: MicroPython = request.getfixturevalue(firmware)
    out = mp.check(NEGATIVE_EXPR, timeout=300)
    assert out.splitlines() == ["up -> ValueError: " + THREW_SIZE, "relu -> 4 4 1",
                                "up -> ValueError: " + THREW_SIZE, "done"], out


# A bilinear Interp from 4 to WIDE columns (a matrix: along w only): its output Mat is
# 4 * WIDE bytes, and ncnn's x86 code then asks `new int[3 * WIDE]` for its tables, which the
# address-space limit cannot give. Run in a Net and standalone; each then runs a small one.
WIDE = 40_000_000
OUT_OF_MEMORY = """
import ncnn_mp
opt = ncnn_mp.Option()
opt.num_threads = 1
x = ncnn_mp.Mat(4, 1)
x.fill(1.0)

def report(label, f):
    try:
        out = f()
        print(label, "->", out.dims, out.w, out.h)
    except Exception as e:
        print(label, "->", type(e).__name__ + ":", e)

net = ncnn_mp.Net()
net.opt = opt
net.load_param(b'''7767517
4 5
Input data 0 1 data
Split split 1 2 data a b
Interp wide 1 1 a wide 0=2 3=1 4=%(wide)d
Interp small 1 1 b small 0=2 3=1 4=8
''')
net.load_model(b"")
with net.create_extractor() as ex:
    ex.input("data", x)
    report("extract wide", lambda: ex.extract("wide"))
    report("extract small", lambda: ex.extract("small"))

def interp(width):
    lay = ncnn_mp.Layer("Interp")
    pd = ncnn_mp.ParamDict()
    pd.set_int(0, 2)
    pd.set_int(3, 1)
    pd.set_int(4, width)
    lay.load_param(pd)
    return lay

wide = interp(%(wide)d)
report("forward wide", lambda: wide.forward(x, opt))
report("forward small", lambda: interp(8).forward(x, opt))
report("forward wide again", lambda: wide.forward(x, opt))
""" % {"wide": WIDE}


def test_out_of_memory_in_a_layer(micropython: MicroPython, tmp_path: Path) -> None:
    if os.environ.get("NCNN_MP_PROFILE") == "asan":
        pytest.skip("ASan reserves its shadow memory up front: it cannot run under an address-space limit")
    script = tmp_path / "oom.py"
    script.write_text(OUT_OF_MEMORY)
    limit = 512 << 20

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    p = subprocess.run([str(micropython.binary), str(script)], capture_output=True, text=True, timeout=120,
                       preexec_fn=limited, env=micropython.env)
    assert p.returncode == 0, p.stdout + p.stderr
    oom = "MemoryError: %s: %s ran out of memory (ncnn threw std::bad_alloc)"
    assert p.stdout.splitlines() == [
        "extract wide -> " + oom % ("Extractor.extract", "layer 'wide' (Interp)"),
        "extract small -> 2 8 1",
        "forward wide -> " + oom % ("Layer.forward", "the layer (typeindex 50)"),
        "forward small -> 2 8 1",
        "forward wide again -> " + oom % ("Layer.forward", "the layer (typeindex 50)"),
    ], p.stdout + p.stderr

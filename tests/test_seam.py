# SPDX-License-Identifier: MIT
"""The C++ seam on the desktop, where ncnn throws: what a layer's forward throws (a failing
`new`, an array of negative length) was std::terminate, SIGABRT, from extract and from a
standalone Layer.forward. Now std::bad_alloc is MemoryError and std::bad_array_new_length a
ValueError, each naming the call and the layer; the Net, the Extractor and the process work
on afterwards. Shown with an allocation that fails under an address-space limit, as on a
device (tests/mp's ncnn_mp_interp_size.py has what the rules refuse first)."""

from __future__ import annotations

import resource
import subprocess
from pathlib import Path

import pytest

from conftest import SANITIZED, MicroPython

# An Interp whose size expression (param 9) gives an output 2^30 - 1 wide: ncnn's x86 Interp
# counts its coefficient buffer (3 ints a column and row) in int, which wrapped negative, and
# asked `new int[]` for that: std::bad_array_new_length, which the seam made this layer's
# ValueError ("asked for an array of negative or impossible size"). The shape guard now caps an
# Interp's output below 2^28 values (a board's ncnn has no seam: it ended the program there),
# and refuses this one before ncnn allocates; below the cap the count cannot wrap, and no other
# layer the rules let through is known to throw it. The case stays, as the guard's refusal in
# the seam's place: the Net and the Extractor work on, and valgrind sees nothing.
WIDE_EXPR = """
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

REFUSED_SIZE = ("Extractor.extract: the input does not fit the model: layer 'up' (Interp) resizes to "
                "w=1073741823 h=1 by its output size or scales (params 1 to 4): each must come to 1 or more, "
                "the output to fewer than 2^28 values (w=4 h=4 c=1)")


@pytest.mark.parametrize("firmware", ["micropython", "micropython_memcheck"])
def test_layer_that_threw_is_refused_first(request: pytest.FixtureRequest, firmware: str) -> None:
    mp: MicroPython = request.getfixturevalue(firmware)
    out = mp.check(WIDE_EXPR, timeout=300)
    assert out.splitlines() == ["up -> ValueError: " + REFUSED_SIZE, "relu -> 4 4 1",
                                "up -> ValueError: " + REFUSED_SIZE, "done"], out


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
    if SANITIZED:
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

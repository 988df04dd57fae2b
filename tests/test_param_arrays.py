# SPDX-License-Identifier: MIT
"""A wrapped layer is checked whole: every parameter array its forward indexes by the input's
extent, as the table in ncnn_mp/guard/shape_rules.cpp lists them. For each row of that table, a model
whose array is one element short of what the input makes the forward read is refused with a
ValueError naming the layer and the array, and the same model with the array exactly long
enough runs. Before the rules: an Eltwise SUM with fewer coefficients than inputs summed
garbage (1.9e34, 3.8e17, ... from run to run), a Gemm whose constant C had fewer rows or columns
than the output read C past its end (wrong values, SIGSEGV for a large M)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from conftest import REPO, MicroPython

ROW = re.compile(r'/\* (\w+) \*/ \{ "(\w+)", "([^"]+)", "([^"]+)" \}')


def table() -> dict[str, tuple[str, str, str]]:
    """The rows of shape_rules.cpp's param_arrays: name -> (type, array, what it covers)."""
    src = (REPO / "ncnn_mp" / "guard" / "shape_rules.cpp").read_text()
    body = src[src.index("const ncnn_mp_param_array_t param_arrays"):]
    body = body[:body.index("};")]
    return {m[1]: (m[2], m[3], m[4]) for m in ROW.finditer(body)}


def floats(*xs: float) -> bytes:
    """A weight as ncnn's ModelBin reads it with type 0: a flag word (0: raw float32), the values."""
    return struct.pack("<I%df" % len(xs), 0, *xs)


# Per row: (param lines after the Input(s), the weights, the input shapes) for an array of
# `have` elements read over `need`; the output blob is "out".
def eltwise_coeffs(have: int, need: int) -> tuple[list[str], bytes, list[tuple[int, ...]]]:
    coeffs = ",".join(["1.5"] * have)
    tops = " ".join(f"x{i}" for i in range(need))
    lines = [f"Split split 1 {need} data {tops}", f"Eltwise sum {need} 1 {tops} out 0=1 -23301={have},{coeffs}"]
    return lines, b"", [(4, 3, 2)]


def gemm_c_rows(have: int, need: int) -> tuple[list[str], bytes, list[tuple[int, ...]]]:
    # A (need rows of K=2) times a constant B (K=2 x N=3), plus a constant C of `have` rows (type 1)
    line = f"Gemm gemm 1 1 data out 4=0 5=1 6=1 7={have} 8=3 9=2 10=1"
    return [line], floats(*[0.5] * 6) + floats(*range(have)), [(2, need)]


def gemm_c_columns(have: int, need: int) -> tuple[list[str], bytes, list[tuple[int, ...]]]:
    # a constant A (M=2 x K=3) times B (K=3 x need columns), plus a constant C of `have` columns (type 4)
    line = f"Gemm gemm 1 1 data out 4=1 5=0 6=1 7=2 8={have} 9=3 10=4"
    return [line], floats(*[0.5] * 6) + floats(*range(have)), [(need, 3)]


BUILDERS = {"ELTWISE_COEFFS": eltwise_coeffs, "GEMM_C_ROWS": gemm_c_rows, "GEMM_C_COLUMNS": gemm_c_columns}

SCRIPT = """
import struct
import ncnn_mp
net = ncnn_mp.Net()
net.opt.num_threads = 1
net.load_param(%(param)r)
net.load_model(%(weights)r)
with net.create_extractor() as ex:
    for i, shape in enumerate(%(shapes)r):
        x = ncnn_mp.Mat(*shape)
        for k in range(x.c):
            for j in range(x.w * x.h):
                x[k * x.cstep + j] = 0.25 * (j %% 5)
        ex.input("data" if i == 0 else "data%%d" %% i, x)
    try:
        out = ex.extract("out")
        print("runs", out.w, out.h, out.c)
    except ValueError as e:
        print("ValueError:", e)
"""


def source(lines: list[str], weights: bytes, shapes: list[tuple[int, ...]]) -> str:
    layers = ["Input data 0 1 data"] + lines
    blobs = {b for line in layers for b in line.split()[4:4 + sum(map(int, line.split()[2:4]))]}
    param = "\n".join(["7767517", f"{len(layers)} {len(blobs)}", *layers]) + "\n"
    return SCRIPT % {"param": param.encode(), "weights": weights, "shapes": shapes}


def test_every_row_has_a_model() -> None:
    rows = table()
    assert rows, "no rows found in shape_rules.cpp's param_arrays"
    assert sorted(rows) == sorted(BUILDERS), "a row of the table without a model here (or one gone)"


@pytest.mark.parametrize("firmware", ["micropython", "micropython_memcheck"])
@pytest.mark.parametrize("row", sorted(BUILDERS))
def test_one_element_short(request: pytest.FixtureRequest, firmware: str, row: str) -> None:
    mp: MicroPython = request.getfixturevalue(firmware)
    kind, array, covers = table()[row]
    short = mp.check(source(*BUILDERS[row](3, 4)), timeout=300).strip()
    assert short.startswith("ValueError: Extractor.extract: the input does not fit the model: "), short
    assert f"({kind}) has 3 of its {array}, {covers}: its input needs 4 " in short, short
    exact = mp.check(source(*BUILDERS[row](4, 4)), timeout=300).strip()
    assert exact.startswith("runs "), exact

# SPDX-License-Identifier: MIT
"""The reproducers of tests/fuzz/KNOWN_NCNN_ISSUES.md still do what the document says: a
crash inside ncnn, or (memcheck) an invalid access only valgrind sees. When a newer ncnn
fixes one, this fails: drop it from the document (and the fuzzer's known crashes). Those
ncnn_mp's shape guard now refuses (expect=refused) must end in its ValueError, natively
and under valgrind with no report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import MicroPython

DOC = Path(__file__).resolve().parent / "fuzz" / "KNOWN_NCNN_ISSUES.md"
BLOCK = re.compile(r"```ncnn-repro (?P<attrs>[^\n]*)\n(?P<param>.*?)```", re.S)

RUN = """
import sys, ncnn_mp
net = ncnn_mp.Net()
net.opt.num_threads = 1
net.load_param_mem(%(param)r)
net.load_model(ncnn_mp.DataReader(zeros=True))
x = ncnn_mp.Mat(*%(shape)r)
x.fill(0.5)
with net.create_extractor() as ex:
    ex.input("data", x)
    try:
        ex.extract("out")
        print("no crash")
    except Exception as e:
        print("no crash:", type(e).__name__, e)
"""


def reproducers() -> list[dict[str, str]]:
    out = []
    for m in BLOCK.finditer(DOC.read_text()):
        attrs = dict(kv.split("=", 1) for kv in m.group("attrs").split())
        out.append(dict(attrs, param=m.group("param")))
    return out


REPROS = reproducers()


def source(r: dict[str, str]) -> str:
    return RUN % {"param": r["param"], "shape": [int(v) for v in r["input"].split(",")]}


def test_document_has_reproducers() -> None:
    assert len(REPROS) >= 5 and all(r["expect"] in ("crash", "memcheck", "refused") for r in REPROS), REPROS


@pytest.mark.parametrize("repro", [r for r in REPROS if r["expect"] == "crash"], ids=lambda r: r["id"])
def test_still_crashes(micropython: MicroPython, repro: dict[str, str]) -> None:
    r = micropython.run_source(source(repro), timeout=60)
    assert r.returncode < 0, f"ncnn no longer crashes on {repro['id']}: update KNOWN_NCNN_ISSUES.md\n" + r.explain()


@pytest.mark.slow
@pytest.mark.parametrize("repro", [r for r in REPROS if r["expect"] == "memcheck"], ids=lambda r: r["id"])
def test_still_reads_out_of_bounds(micropython_memcheck: MicroPython, repro: dict[str, str]) -> None:
    r = micropython_memcheck.run_source(source(repro), timeout=600)
    assert r.returncode == 99 and "Invalid read" in r.stderr, \
        f"valgrind no longer reports {repro['id']}: update KNOWN_NCNN_ISSUES.md\n" + r.explain()


REFUSED = [r for r in REPROS if r["expect"] == "refused"]


@pytest.mark.parametrize("repro", REFUSED, ids=lambda r: r["id"])
def test_refused_by_the_shape_guard(micropython: MicroPython, repro: dict[str, str]) -> None:
    r = micropython.run_source(source(repro), timeout=60)
    # (the input's shape, or the blob counts the model gives the layer)
    assert r.returncode == 0 and re.search(r"no crash: ValueError Extractor\.extract: the (input does|blobs do) not fit "
                                           r"the model: layer ", r.stdout), r.explain()


@pytest.mark.parametrize("repro", REFUSED, ids=lambda r: r["id"])
def test_refused_without_an_invalid_access(micropython_memcheck: MicroPython, repro: dict[str, str]) -> None:
    r = micropython_memcheck.run_source(source(repro), timeout=600)
    assert r.returncode == 0 and re.search(r"(does|do) not fit the model", r.stdout), r.explain()

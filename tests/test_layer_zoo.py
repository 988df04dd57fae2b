# SPDX-License-Identifier: MIT
"""The layer zoo (tests/fuzz/layer_zoo.py): every layer type ncnn registers, made standalone,
with its default parameters and random ones, weights from an endless reader of zeros, and
forwards of 0 to 3 inputs of several shapes asking 1 to 3 outputs. Every call raises or
returns; the process never crashes (plain), and memcheck reports nothing (valgrind).

The CI budget is a few seeds; `make fuzz-zoo SEEDS=N` runs many (each seed tries every
type TRIALS times)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import MicroPython

ZOO = Path(__file__).resolve().parent / "fuzz" / "layer_zoo.py"
LAYER_TYPES = 110


def outcomes(stdout: str) -> dict[str, int]:
    found = {}
    for line in stdout.splitlines():
        m = re.fullmatch(r"(\S+ \S+) (\d+)", line)
        if m:
            found[m.group(1)] = int(m.group(2))
    return found


def check_run(mp: MicroPython, seed: int, trials: int, timeout: float) -> None:
    r = mp.run(ZOO, str(seed), str(trials), timeout=timeout)
    assert r.returncode == 0, f"seed {seed}: the zoo ended with {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    assert r.stdout.rstrip().endswith("done"), r.stdout[-2000:]
    got = outcomes(r.stdout)
    # every type was made (two are registered without a creator in this ncnn: ArgMax, SPP)
    assert got.get("make ok", 0) + got.get("make ValueError", 0) >= LAYER_TYPES, got
    assert got.get("make ValueError", 0) == 2, got
    # the zoo reached forwards that ran, and forwards that were refused
    assert got.get("forward ok", 0) > 0 and got.get("forward ValueError", 0) > 0, got


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_layer_zoo(micropython: MicroPython, seed: int) -> None:
    check_run(micropython, seed, trials=10, timeout=300)


def test_layer_zoo_under_valgrind(micropython_memcheck: MicroPython) -> None:
    check_run(micropython_memcheck, 5, trials=3, timeout=900)

"""The API sequence fuzzer (tests/fuzz/api_fuzz.py): its CI budget, every saved
regression, and a short run under valgrind. The full runs are its command line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import MicroPython

sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))

import api_fuzz  # noqa: E402
from fuzzlib import regressions  # noqa: E402

SEED = 1
SEQUENCES = 600
VALGRIND_SEQUENCES = 40


def test_stub_drives_the_fuzzer() -> None:
    """Every class and method of ncnn_mp.pyi is something the generator can call."""
    stub = api_fuzz.read_stub()
    assert {"Net", "Mat", "Extractor", "Layer", "Option"} <= set(stub.classes)
    called = set()
    for sid in range(SEQUENCES):
        for step in api_fuzz.make_sequence(stub, SEED, sid):
            if step[0] in ("call", "get", "set"):
                called.add(f"{step[1]}.{step[3]}")
            elif step[0] == "static":
                called.add(f"{step[1]}.{step[2]}")
            elif step[0] == "new":
                called.add(f"{step[1]}.__init__")
            elif step[0] == "fn":
                called.add(step[1])
    dunders = {"__getitem__", "__setitem__", "__len__", "__buffer__"}  # steps of their own
    declared = {f"{c}.{m}" for c, members in stub.classes.items() for m in members if m not in dunders}
    declared |= set(stub.functions)
    missing = declared - called
    assert not missing, f"the CI budget never calls {sorted(missing)}"


def test_api_fuzz_ci_budget(micropython: MicroPython) -> None:
    """Every call ends in a result or a Python exception, no custom layer outlives its
    sequence, and the heap comes back (each batch runs four times; see api_fuzz.HEAP_SLACK)."""
    stats = api_fuzz.ApiFuzzer(micropython, SEED, save=False).fuzz(SEQUENCES)
    print(stats.report())
    assert stats.sequences == SEQUENCES, stats.report()
    assert stats.outcomes["ok"] > stats.steps // 4, stats.report()
    assert not stats.findings, stats.report()


@pytest.mark.parametrize("path", regressions("api"), ids=lambda p: p.stem)
def test_api_regression(micropython: MicroPython, path: Path) -> None:
    assert api_fuzz.replay(micropython, path) == []


@pytest.mark.slow
def test_api_fuzz_under_valgrind(micropython_memcheck: MicroPython) -> None:
    """No invalid access, no use of uninitialised memory, no leak."""
    stats = api_fuzz.ApiFuzzer(micropython_memcheck, SEED, save=False).fuzz(VALGRIND_SEQUENCES, batch=VALGRIND_SEQUENCES)
    print(stats.report())
    assert stats.sequences > 0 and not stats.findings, stats.report()

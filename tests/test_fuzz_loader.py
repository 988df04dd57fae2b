"""The loader fuzzer (tests/fuzz/loader_fuzz.py): its CI budget, every saved regression,
and a short run under valgrind. The full runs are its command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import MNIST_FILES, SHARED_MODELS, MicroPython, shared_models, shared_models_if_here

sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))

import loader_fuzz  # noqa: E402
from fuzzlib import regressions  # noqa: E402

# Seed 1, cases 0..CASES-1: the cases known to crash inside ncnn are listed in
# tests/fuzz/loader_known_crashes.json and skipped.
SEED = 1
CASES = 3000
VALGRIND_CASES = 600  # of which for_valgrind() keeps about 50


def shared_model_of(family: str) -> tuple[str, str]:
    """Where a family's model lives in ../shared/models: (folder, file)."""
    return ("mnist", "mnist.param") if family == "mnist" else ("bench", f"{family}.param")


@pytest.fixture(scope="module")
def families(digits_dir: Path) -> dict[str, loader_fuzz.Family]:
    """The digits model, and MNIST and the benchmark nets when ../shared/models is here
    (under CI they must be: conftest.shared_models)."""
    shared_models_if_here("mnist", *MNIST_FILES)
    shared_models_if_here("bench", *(f"{name}.param" for name in loader_fuzz.BENCH_WEIGHTS))
    return loader_fuzz.discover_families(digits_dir, SHARED_MODELS)


def test_loader_fuzz_ci_budget(micropython: MicroPython, families: dict[str, loader_fuzz.Family],
                               request: pytest.FixtureRequest) -> None:
    """Every case ends in success or a Python exception; a Net that failed still loads the
    real model and answers right (health checks); no custom layer is left alive."""
    fz = loader_fuzz.LoaderFuzzer(micropython, families, SEED, save=False,
                                  sym=lambda: request.getfixturevalue("micropython_memcheck"))
    stats = fz.fuzz(CASES)
    print(stats.report())
    assert stats.health_checks > CASES // 50, "the health checks did not run"
    assert stats.outcomes["ok"] > 0 and stats.outcomes["param failed"] > 0, stats.report()
    assert not stats.findings, stats.report() + (
        "\n(a case in loader_known_crashes.json no longer crashes, or the generator changed: "
        "python tests/fuzz/loader_fuzz.py --cases 2000 --write-known)" if stats.known else "")


@pytest.mark.parametrize("path", regressions("loader"), ids=lambda p: p.stem)
def test_loader_regression(micropython: MicroPython, families: dict[str, loader_fuzz.Family], path: Path) -> None:
    needed = set(json.loads(path.read_text())["families"]) - set(families)
    for family in sorted(needed):
        shared_models(*shared_model_of(family))  # skipped, or under CI failed, naming the file
    assert not needed, f"{path.name} needs families that are not here: {sorted(needed)}"
    assert loader_fuzz.replay(micropython, families, path) is None


# Under valgrind: the small models, and only damage that ncnn's parsers and ModelBin see
# (bytes, counts, junk tokens, binary words, weights). Mutations that give a layer other
# shapes than its weights are left out: ncnn's layers then read past their buffers even
# where they do not crash (KNOWN_NCNN_ISSUES.md, N1), which memcheck rightly reports.
PARSER_DAMAGE = {"bytes", "header", "junk_token", "words"}


def for_valgrind(case: loader_fuzz.Case) -> bool:
    h = case.header
    fam = {"digits": [8, 8, 1], "mnist": [28, 28, 1]}.get(h["fam"])
    return fam is not None and set(h["muts"]) <= PARSER_DAMAGE and (h["in"] is None or h["in"][1] == fam)


@pytest.mark.slow
def test_loader_fuzz_under_valgrind(micropython_memcheck: MicroPython,
                                    families: dict[str, loader_fuzz.Family]) -> None:
    """Cases of the CI budget under memcheck: no invalid access, no use of uninitialised
    memory, no leak."""
    fz = loader_fuzz.LoaderFuzzer(micropython_memcheck, families, SEED, save=False)
    stats = fz.fuzz(VALGRIND_CASES, batch=VALGRIND_CASES, only=for_valgrind)
    print(stats.report())
    assert stats.cases > 0 and not stats.findings, stats.report()

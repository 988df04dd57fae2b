"""The loader fuzzer (tests/fuzz/loader_fuzz.py): its CI budget, every saved regression,
and a short run under valgrind. The full runs are its command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import MNIST_FILES, SHARED_MODELS, MicroPython, shared_models, shared_models_if_here

import loader_fuzz  # tests/fuzz (pyproject.toml's pythonpath)
from fuzzlib import regressions

# Seed 1, cases 0..CASES-1: the cases known to crash inside ncnn are listed in
# tests/fuzz/loader_known_crashes.json, keyed by their content, and skipped.
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
    # Weights also loaded in place, as the copying load of the same bytes did: some worked, some ran out.
    assert stats.in_place["ok"] > 50 and stats.in_place["model:ValueError"] > 20, stats.report()
    refresh = f"python3 -m ci.tool fuzz-loader --cases {CASES} --seed {SEED} --write-known"
    # With the models the list was made with, every listed case must come up again:
    # one that does not means the generator changed, and the list skips nothing real.
    assert not stats.known_unmet, stats.report() + f"\n(refresh the list: {refresh})"
    assert not stats.findings, stats.report() + (
        f"\n(a known case no longer crashes where it did, or the generator changed: {refresh})" if stats.known else "")


def test_known_crashes_are_keyed_by_content(micropython: MicroPython, families: dict[str, loader_fuzz.Family],
                                            digits_dir: Path) -> None:
    """A known case is skipped for what it runs, not for its number: with another set of
    models, case N is another case, and it runs."""
    known = loader_fuzz.KnownCases.load()
    listed = known.data[str(SEED)]["cases"]
    assert listed, "loader_known_crashes.json lists no case"
    typeindex = loader_fuzz.type_indexes(micropython)
    digits_only = loader_fuzz.discover_families(digits_dir, digits_dir / "no-shared-models")
    assert list(digits_only) == ["digits"]
    assert known.expected(SEED, digits_only, 0, CASES) == {}  # not the models the list was made with
    moved = 0
    for entry in listed.values():
        if entry["fam"] in digits_only:
            continue
        case = loader_fuzz.make_case(digits_only, typeindex, SEED, entry["case"])
        assert loader_fuzz.case_key(digits_only, case) not in known.sites(), entry
        moved += 1
    assert moved, "no listed case of a shared model: nothing was checked"
    if {k: f.digest for k, f in families.items()} == known.data[str(SEED)]["families"]:  # the list's models
        for key, entry in listed.items():
            assert loader_fuzz.case_key(families, loader_fuzz.make_case(families, typeindex, SEED, entry["case"])) == key


def test_in_place_cases_every_way(families: dict[str, loader_fuzz.Family]) -> None:
    """The CI budget loads weights in place from bytes and from memoryview slices at aligned
    offsets (and unaligned ones, refused), with the case's param and the family's own, the
    buffer dropped or compared after; a case's "ip" comes from a stream of its own, so
    the cases without it are what they were before in-place loads came (their keys too)."""
    seen: set[tuple[str, Any]] = set()
    for cid in range(CASES):
        ip = loader_fuzz.in_place_spec(SEED, cid, "good")
        if ip:
            seen |= {("via", ip["via"]), ("aligned", ip["pad"] % 4 == 0), ("drop", ip["drop"]), ("real", ip["real"])}
    assert seen == {("via", "bytes"), ("via", "mv"), ("aligned", True), ("aligned", False), ("drop", True),
                    ("drop", False), ("real", True), ("real", False)}, seen
    typeindex = {t: i for i, t in enumerate(loader_fuzz.LAYER_TYPES)}  # (which index is which does not matter here)
    for cid in range(200):
        case = loader_fuzz.make_case(families, typeindex, SEED, cid)
        model = case.header["model"]
        assert ("ip" in case.header) == (loader_fuzz.in_place_spec(SEED, cid, model) is not None)
        assert "ip" not in case.header or model in ("good", "mut")


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

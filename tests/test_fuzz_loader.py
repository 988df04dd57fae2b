# SPDX-License-Identifier: MIT
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
# Array cases (loader_fuzz.make_array_case) of seed 1: a few seconds on the Unix firmware,
# about as long under valgrind. `make fuzz-loader` runs a tenth of its CASES (10,000).
ARRAY_CASES = 1000
VALGRIND_ARRAY_CASES = 400


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


def test_array_cases_cover_every_array_every_way() -> None:
    """The array cases take every row of shape_rules.cpp's table of parameter arrays (with
    test_param_arrays.py's model of it) and every array built here, each array of a layer
    with more than one, inputs of each dims the layer indexes it by, and each length: shorter, one less, longer, zero, one, far longer
    with its data, absurd (said in the param only); the .bin changed with it and kept."""
    from test_param_arrays import table

    kinds = loader_fuzz.array_kinds()
    assert set(table()) <= set(kinds) and set(loader_fuzz.LOCAL_ARRAYS) <= set(kinds)
    seen: set[tuple[str, Any]] = set()
    for cid in range(ARRAY_CASES):
        h = loader_fuzz.make_array_case(kinds, SEED, cid).header
        seen |= {("row", h["arr"]), ("how", h["how"]), ("which", (h["arr"], h["which"])),
                 ("bin", h["keep"] == h["have"]), ("dims", (h["arr"], h["dims"]))}
        assert h == loader_fuzz.make_array_case(kinds, SEED, cid).header  # the same on every run
    assert {v for k, v in seen if k == "row"} == set(kinds)
    assert {v for k, v in seen if k == "how"} == {"short", "one_less", "longer", "zero", "one", "far", "absurd"}
    assert {v for k, v in seen if k == "which"} == {(row, w) for row, kd in kinds.items() for w in range(kd.arrays)}
    assert {v for k, v in seen if k == "dims"} == {(row, d) for row, kd in kinds.items() for d in kd.dims}
    assert {v for k, v in seen if k == "bin"} == {True, False}


def test_loader_fuzz_arrays(micropython: MicroPython, families: dict[str, loader_fuzz.Family],
                            request: pytest.FixtureRequest) -> None:
    """Every array case raises ValueError or MemoryError naming its layer, or gives the outputs
    of the same layer with its array exactly as long; never a crash. Each array is both
    refused and run."""
    fz = loader_fuzz.LoaderFuzzer(micropython, families, SEED, save=False,
                                  sym=lambda: request.getfixturevalue("micropython_memcheck"))
    stats = fz.fuzz(ARRAY_CASES, arrays=True)
    print(stats.report())
    assert not stats.findings, stats.report()
    assert stats.cases == ARRAY_CASES and stats.array_verdicts == {"ok": ARRAY_CASES}, stats.report()
    outcomes: dict[str, set[str]] = {}
    for k in stats.arrays:
        row, _, outcome = k.partition(" ")
        outcomes.setdefault(row, set()).add(outcome)
    assert set(outcomes) == set(loader_fuzz.array_kinds()), outcomes
    assert all(any(o.endswith(("ValueError", "MemoryError")) for o in got) for got in outcomes.values()), outcomes
    # A longer array runs, with the exact outputs, where the forward reads a prefix of it and
    # the guard takes that (Eltwise, Gemm's C, Slice); one element runs where one serves all
    # (PReLU, the quantize scales; a Dequantize's bias, none too). BatchNorm, Bias, Scale,
    # PReLU and the quantize layers take their channel count only, or one.
    ran = {(k.split(" ")[0], k.split(" ")[1]) for k in stats.array_runs}
    assert {row for row, rel in ran if rel == "longer"} == {
        "ELTWISE_COEFFS", "GEMM_C_ROWS", "GEMM_C_COLUMNS", "SLICE_LISTS"}, stats.report()
    assert {row for row, rel in ran if rel == "shorter"} == {
        "PRELU_SLOPES", "QUANTIZE_SCALES", "DEQUANTIZE_ARRAYS", "REQUANTIZE_ARRAYS"}, stats.report()


def array_case(kinds: dict[str, loader_fuzz.ArrayKind], cid: int, row: str, length: int, need: int, **header: Any) -> loader_fuzz.Case:
    """Array case cid made by hand: row's array `length` long over `need`, the .bin changed with
    it; `header` overrides what the case says of itself."""
    build, _, broadcast, kind, name, _ = kinds[row]
    have = length
    lines, weights, shapes = build(have, need, 0, have, 3)
    ref_lines, ref_weights, _ = build(need, need, 0, need, 3)
    h = {"id": cid, "fam": "arrays", "arr": row, "layer": kind, "name": name, "which": 0, "how": "by hand",
         "have": have, "need": need, "keep": have, "broadcast": list(broadcast), "w": weights.hex(),
         "ref": loader_fuzz.array_param(ref_lines).decode(), "ref_w": ref_weights.hex(),
         "shapes": [list(x) for x in shapes], "opt": [False, True, True], "check": False, "gc": False}
    h.update(header)
    return loader_fuzz.Case(h, loader_fuzz.array_param(lines))


def test_array_verdicts_can_fail(micropython: MicroPython, families: dict[str, loader_fuzz.Family]) -> None:
    """The runner's judge of array cases is not blind: outputs that differ from the exact
    array's, a run with an array said to be short, and a refusal that does not name the layer
    are each reported; a longer array giving the exact outputs, and a short one refused
    naming the layer, are not."""
    kinds = loader_fuzz.array_kinds()
    exact_bias = loader_fuzz.array_param(["Bias bi 1 1 data out 0=3"])
    cases = [
        array_case(kinds, 0, "ELTWISE_COEFFS", 5, 3),  # longer, the same values: ok
        array_case(kinds, 1, "BIAS_CHANNELS", 2, 3),  # short, refused naming the layer: ok
        array_case(kinds, 2, "BIAS_CHANNELS", 3, 3, ref_w=loader_fuzz.raw(3, 0.75).hex()),  # other outputs
        array_case(kinds, 3, "BIAS_CHANNELS", 3, 3, have=2),  # runs, though said to be short
        array_case(kinds, 4, "BIAS_CHANNELS", 2, 3, layer="Nothing", name="nothing"),  # names another layer
        array_case(kinds, 5, "BIAS_CHANNELS", 3, 3, ref=exact_bias.decode().replace("0=3", "0=-7")),  # no exact run
    ]
    run = loader_fuzz.run_cases(micropython, families, cases)
    assert run.results[0] == "ok" and run.results[1] == "extract:ValueError", run.results
    verdicts = loader_fuzz.array_results(run)
    assert verdicts[0] == "ok" and verdicts[1] == "ok", verdicts
    assert verdicts[2] == "BAD outputs differ from the exact array's", verdicts
    assert verdicts[3] == "BAD ran with 2 of the 3 elements read", verdicts
    assert verdicts[4].startswith("BAD extract:ValueError ValueError not naming 'nothing' (Nothing): "), verdicts
    assert verdicts[5].startswith("BAD the exact array did not run: "), verdicts


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


@pytest.mark.slow
def test_loader_fuzz_arrays_under_valgrind(micropython_memcheck: MicroPython,
                                           families: dict[str, loader_fuzz.Family]) -> None:
    """Array cases under memcheck: no read past an array (the runs with zero elements, not
    compared, included), no uninitialised use, no leak."""
    fz = loader_fuzz.LoaderFuzzer(micropython_memcheck, families, SEED, save=False)
    stats = fz.fuzz(VALGRIND_ARRAY_CASES, batch=VALGRIND_ARRAY_CASES, arrays=True)
    print(stats.report())
    assert not stats.findings, stats.report()
    assert stats.cases == VALGRIND_ARRAY_CASES and stats.array_verdicts == {"ok": VALGRIND_ARRAY_CASES}, stats.report()

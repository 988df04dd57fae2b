# SPDX-License-Identifier: MIT
"""The API sequence fuzzer (tests/fuzz/api_fuzz.py): its CI budget (single-threaded and
threaded), every saved regression, and short runs under valgrind. The full runs are its
command line (make fuzz-api [THREADS=3])."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from conftest import MicroPython

import api_fuzz  # tests/fuzz (pyproject.toml's pythonpath)
from fuzzlib import regressions

SEED = 1
SEQUENCES = 1200
VALGRIND_SEQUENCES = 80
# The threaded run: batches of THREADS threads, each running PER_THREAD sequences.
THREADS = 3
THREAD_BATCHES = 10
PER_THREAD = 20
VALGRIND_THREAD_BATCHES = 2
VALGRIND_PER_THREAD = 8


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


def test_ci_budget_has_every_new_step_kind() -> None:
    """The CI budget keeps lent Mats' derived views, uses them after extract / clear / close /
    collection, runs Allocators through standalone layers, and grows buffers under Mats."""
    stub = api_fuzz.read_stub()
    kinds: Counter[str] = Counter()
    derived: set[str] = set()
    al: set[str] = set()
    grown: set[str] = set()
    after: set[str] = set()

    def layers(obj: object) -> None:  # every "derive" action in the sequence's layer specs
        if isinstance(obj, dict):
            for key in ("f", "fi"):
                action = obj.get(key)
                if isinstance(action, list) and action and action[0] == "derive":
                    derived.update(how for how, _ in action[2])
            for v in obj.values():
                layers(v)
        elif isinstance(obj, list):
            for v in obj:
                layers(v)

    for sid in range(SEQUENCES):
        steps = api_fuzz.make_sequence(stub, SEED, sid)
        layers(steps)
        for i, step in enumerate(steps):
            kinds[step[0]] += 1
            if step[0] == "al" and step[1] == "make":
                al.add(step[3])
            elif step[0] == "buf" and step[1] == "grow":
                grown.add(step[3])
            elif step[0] == "derived" and i:
                prev = steps[i - 1]
                after.add(prev[3] if prev[0] == "call" else prev[0])
    assert kinds["derived"] > 100 and kinds["al"] > 300 and kinds["buf"] > 300, kinds
    assert derived == set(api_fuzz.DERIVATIONS), set(api_fuzz.DERIVATIONS) - derived
    assert al == set(api_fuzz.AL_KINDS), set(api_fuzz.AL_KINDS) - al
    assert grown == {"extend", "slice", "iadd"}
    assert {"extract", "clear", "close", "gc", "drop"} <= after, after


def test_ci_budget_extracts_with_every_kind_of_hook() -> None:
    """The CI budget gives Extractor.extract hooks that do nothing, raise (KeyboardInterrupt and
    SystemExit too), call back into ncnn_mp (closing or clearing what runs, extracting again),
    keep their arguments, take the wrong ones, and no hook or something not callable."""
    stub = api_fuzz.read_stub()
    seen: Counter[str] = Counter()
    for sid in range(SEQUENCES):
        for step in api_fuzz.make_sequence(stub, SEED, sid):
            if step[0] == "call" and step[1:2] == ["Extractor"] and step[3] == "extract" and "hook" in step[5]:
                hook = step[5]["hook"]
                seen[hook["what"] if isinstance(hook, dict) and hook.get("t") == "hook" else "wrong type"] += 1
    assert set(seen) >= {"ok", "raise", "reenter", "keep", "arity", "none", "notcallable"}, seen
    assert seen["reenter"] >= 10 and seen["raise"] >= 10, seen


def test_ci_budget_has_every_round_two_attack() -> None:
    """The CI budget's "r2" steps (issue 21): standalone forwards of many layer types, ModelBin
    mat arrays of every element kind, every close() from inside a read(), every kind of
    buffer given to copy=False, every oversized pixel helper."""
    stub = api_fuzz.read_stub()
    ops: Counter[str] = Counter()
    seen: set[tuple[str, str]] = set()
    types: set[int] = set()
    for sid in range(SEQUENCES):
        for step in api_fuzz.make_sequence(stub, SEED, sid):
            if step[0] != "r2":
                continue
            ops[step[1]] += 1
            if step[1] == "zoo":
                types.add(step[2])
            elif step[1] == "mba":
                seen.update(("mba", kind) for kind in step[2])
            else:
                seen.add((step[1], step[2]))
    assert ops["zoo"] > 150 and ops["mba"] > 30, ops
    assert len(types) > 80, sorted(types)
    want = {("mba", k) for k in api_fuzz.R2_MBA} | {("close", k) for k in api_fuzz.R2_CLOSES}
    want |= {("view", k) for k in api_fuzz.R2_VIEWS} | {("huge", k) for k in api_fuzz.R2_HUGE}
    assert want <= seen, want - seen


def test_ci_budget_has_every_round_three_attack() -> None:
    """The CI budget's "r3" steps (issue 31): every layer that pads, with pads of every sign and
    SAME, on odd sides; every camera format into a Mat, resized, and back, with strides and
    buffers short, exact and long."""
    stub = api_fuzz.read_stub()
    seen: set[tuple[str, ...]] = set()
    pads: set[int] = set()
    for sid in range(SEQUENCES):
        for step in api_fuzz.make_sequence(stub, SEED, sid):
            if step[0] != "r3":
                continue
            if step[1] == "pad":
                seen.add(("pad", step[2]))
                pads.update(v for k, v in step[3] if k not in (0, 1, 2, 5, 6, 7, 11) or step[2] == "Padding")
            else:
                seen.update({("camera", step[2]), ("op", step[8]), ("stride", step[6]), ("buffer", step[7])})
    want = {("pad", k) for k in api_fuzz.R3_PAD_LAYERS} | {("camera", k) for k in api_fuzz.R3_CAMERA}
    want |= {("op", k) for k in api_fuzz.R3_CAMERA_OPS} | {("stride", k) for k in ("exact", "short", "long", "zero")}
    want |= {("buffer", k) for k in ("exact", "short", "long")}
    assert want <= seen, want - seen
    assert {-234, -233, -60, -1, 0, 1, 40} <= pads, sorted(pads)


def test_ci_budget_loads_weights_in_place_every_way() -> None:
    """The CI budget's "wip" steps load from every kind of buffer, in place and copying, check
    extracts, weights_info() and the Mats a Python layer kept once the buffer was dropped and
    the heap reused and once the net was cleared, given its param again or closed; give a Mat
    the net points into new storage; load a net from a lent Mat; and random steps call
    load_model(copy=False) with read-only and unaligned buffers."""
    stub = api_fuzz.read_stub()
    loads: set[tuple[str, bool]] = set()
    ops: Counter[str] = Counter()
    checked_after: set[str] = set()
    attacks: set[str] = set()
    random_in_place = 0
    for sid in range(SEQUENCES):
        steps = api_fuzz.make_sequence(stub, SEED, sid)
        bufs: dict[str, str] = {}
        since: set[str] = set()  # what happened since the last load
        for step in steps:
            if step[0] == "call" and step[3] == "load_model" and step[5].get("copy") is False:
                random_in_place += 1
            if step[0] != "wip":
                continue
            ops[step[1]] += 1
            if step[1] == "buf":
                bufs[step[2]] = step[5]
            elif step[1] == "load":
                loads.add((bufs[step[3]], step[4]))
                since = set()
            elif step[1] == "attack":
                attacks.add(step[3])
            elif step[1] in ("run", "kept"):
                checked_after |= since
            elif step[1] in ("churn", "clear", "param", "close", "matop"):
                since.add(step[1] if step[1] != "matop" else "matop " + step[3])
    kinds = api_fuzz.WIP_ACCEPTED + api_fuzz.WIP_REFUSED
    assert {k for k, copy in loads if not copy} == set(kinds), loads
    assert {k for k, copy in loads if copy} == set(kinds) - {"str"}, loads
    assert attacks == {"mat", "mv"}, attacks
    assert {"churn", "clear", "param", "close", "matop create"} <= checked_after, checked_after
    assert ops["info"] > 300 and ops["run"] > 300 and ops["kept"] > 300, ops
    assert random_in_place > 20, random_in_place


def test_threaded_budget_reloads_weights_in_place() -> None:
    """The threaded budget's nets include one with weights in place, shared by every thread
    and reloaded (in place, and copying) while the others extract."""
    weighted = [k for k, w in enumerate(api_fuzz.THREAD_WEIGHTS) if w is not None]
    shared = [i for i, k in enumerate(api_fuzz.SHARED_KINDS) if k in weighted]
    assert weighted and shared
    reloads: set[bool] = set()
    runs = 0
    for b in range(THREAD_BATCHES):
        for w in api_fuzz.thread_batch(SEED, b, THREADS, PER_THREAD):
            for seq in w["seqs"]:
                for op in seq["ops"]:
                    if op[:2] == ["reload", "shared"] and op[2] in shared:
                        reloads.add(op[3])
                    elif op[:2] == ["run", "shared"] and op[2] in shared:
                        runs += 1
    assert reloads == {True, False} and runs > 50, (reloads, runs)


def test_ci_budget_misbehaves_through_python_readers() -> None:
    """The CI budget's "prd" steps load through Python DataReaders over every stream, with every
    load method, every misbehaviour at a read() call, and reuse, rewind, close and drop between
    loads; the threaded budget loads through readers the threads share, rewinds and closes them."""
    stub = api_fuzz.read_stub()
    streams: set[str] = set()
    methods: set[str] = set()
    events: set[str] = set()
    ops: Counter[str] = Counter()
    for sid in range(SEQUENCES):
        for step in api_fuzz.make_sequence(stub, SEED, sid):
            if step[0] != "prd":
                continue
            ops[step[1]] += 1
            if step[1] == "reader":
                streams.add(step[4])
                events.update(f"{what} {arg}" for what, arg in step[7]["ev"].values())
            elif step[1] == "load":
                methods.add(step[4])
    assert streams == set(api_fuzz.PRD_STREAMS), streams
    assert methods == {"load_param", "load_param_bin", "load_model", "modelbin", "nocopy"}, methods
    assert events == {f"{what} {arg}" for what, arg in api_fuzz.PRD_EVENTS}, events
    assert ops["load"] > 300 and all(ops[k] > 5 for k in ("rewind", "close", "drop", "mbmore", "run")), ops
    threaded: Counter[str] = Counter()
    for b in range(THREAD_BATCHES):
        for w in api_fuzz.thread_batch(SEED, b, THREADS, PER_THREAD):
            for seq in w["seqs"]:
                threaded.update(op[0] for op in seq["ops"] if op[0].startswith("prd"))
    assert threaded["prd"] > 50 and threaded["prdrewind"] > 20 and threaded["prdclose"] > 2, threaded


def test_api_fuzz_ci_budget(micropython: MicroPython) -> None:
    """Every call ends in a result or a Python exception, no custom layer outlives its
    sequence, and the heap comes back (each batch runs four times; see api_fuzz.HEAP_SLACK)."""
    # minimise=False: a failing firmware fails here in minutes, not hours (each finding is still
    # located to its sequence and step; api_fuzz.py --start N --sequences 1 minimises and saves it).
    stats = api_fuzz.ApiFuzzer(micropython, SEED, minimise=False, save=False).fuzz(SEQUENCES)
    print(stats.report())
    assert stats.sequences == SEQUENCES, stats.report()
    assert stats.outcomes["ok"] > stats.steps // 4, stats.report()
    assert not stats.findings, stats.report()


def test_api_fuzz_threads(request: pytest.FixtureRequest) -> None:
    """Threads at once on their own and on shared Nets: every Python-layer exception comes out
    in the thread whose extract raised it, colliding calls raise RuntimeError or ValueError,
    results are the single-threaded reference's, the process lives and its heap comes back.
    On the GIL firmware (make sanitize: the sanitizer firmware with a GIL): ncnn runs outside the
    GIL, so ncnn_mp's C code still runs in parallel with other threads' Python. Without a GIL,
    MicroPython's own collector can free a new object a thread stores into an object it has
    marked (tests/gc_store_race.py, no ncnn_mp), which made this budget fail now and then on the
    GIL-less sanitizer firmware for a reason not ncnn_mp's (api-threads-6-6, issue 31). The
    runner's layers store through tests/mp/gc_settled.py, so that `make fuzz-api THREADS=3`,
    GIL-less, meets that race rarely (api-threads-6-6 under load: 1 run in 600, 7 in 400 before)."""
    mp: MicroPython = request.getfixturevalue("micropython_gil")
    stats = api_fuzz.ThreadFuzzer(mp, SEED, THREADS, save=False).fuzz(THREAD_BATCHES, PER_THREAD)
    print(stats.report())
    assert stats.batches == THREAD_BATCHES, stats.report()
    assert stats.outcomes["ok"] > sum(stats.outcomes.values()) // 2, stats.report()
    assert not stats.findings, stats.report()


@pytest.mark.parametrize("path", regressions("api"), ids=lambda p: p.stem)
def test_api_regression(request: pytest.FixtureRequest, path: Path) -> None:
    # A threaded batch replays on the GIL firmware (under make sanitize the sanitizer's), as the
    # threaded budget runs (see there).
    threaded = path.name.startswith("api-threads")
    mp: MicroPython = request.getfixturevalue("micropython_gil" if threaded else "micropython")
    assert api_fuzz.replay(mp, path) == []


@pytest.mark.slow
def test_api_fuzz_under_valgrind(micropython_memcheck: MicroPython) -> None:
    """No invalid access, no use of uninitialised memory, no leak."""
    stats = api_fuzz.ApiFuzzer(micropython_memcheck, SEED, minimise=False, save=False).fuzz(
        VALGRIND_SEQUENCES, batch=VALGRIND_SEQUENCES)
    print(stats.report())
    assert stats.sequences > 0 and not stats.findings, stats.report()


@pytest.mark.slow
def test_api_fuzz_threads_under_valgrind(micropython_memcheck: MicroPython) -> None:
    """The threaded mode under valgrind (which runs one thread at a time, switching often)."""
    stats = api_fuzz.ThreadFuzzer(micropython_memcheck, SEED, THREADS, save=False).fuzz(
        VALGRIND_THREAD_BATCHES, VALGRIND_PER_THREAD, passes=2)
    print(stats.report())
    assert stats.batches == VALGRIND_THREAD_BATCHES and not stats.findings, stats.report()

# SPDX-License-Identifier: MIT
"""Out of memory: loads and extracts on a tiny MicroPython heap, and custom layers that run
out of memory (or raise MemoryError), end in MemoryError, and the process and the Net
still work afterwards."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from conftest import MP_TESTS, SANITIZED, MicroPython

# A chain of CHAIN Python layers (the digits model's Standardize, each subtracting 0.01),
# loaded and run on an 8x8 input of 3s; prints "ok <first output>" or "MemoryError
# <stage>". The chain is what lets a small heap run out after the import: the script's
# and digits_layers' compilation needs about 9 KiB at its peak, and the digits model's
# one Python layer then needs only some 0.7 KiB more to load and run, so every heap
# that lets the import finish also loads and runs it. Each Python layer holds about
# 0.2 KiB of the heap after load_param, and 0.15 KiB more after load_model.
CHAIN = 60
TINY = """
import sys
where = "import"
try:
    import ncnn_mp
    from digits_layers import Standardize  # (examples/ is on MICROPYPATH: conftest's harness)
    where = "load_param"
    net = ncnn_mp.Net()
    net.register_custom_layer("Standardize", Standardize)
    net.load_param(sys.argv[1] + "/chain.param")
    where = "load_model"
    net.load_model(sys.argv[1] + "/chain.bin")
    where = "extract"
    x = ncnn_mp.Mat(8, 8, 1)
    x.fill(3)
    with net.create_extractor() as ex:
        ex.input("data", x)
        out = ex.extract("out")
    print("ok", round(out[0], 4))
except MemoryError:
    print("MemoryError", where)
"""
STAGES = ("import", "load_param", "load_model", "extract")


def write_chain(folder: Path) -> None:
    """CHAIN Standardize layers over 64 elements: each subtracts 0.01 (mean) and scales by 1."""
    layers = [f"Standardize s{i} 1 1 {'data' if i == 1 else f'b{i - 1}'} {'out' if i == CHAIN else f'b{i}'} 0=64"
              for i in range(1, CHAIN + 1)]
    (folder / "chain.param").write_text("\n".join(["7767517", f"{CHAIN + 1} {CHAIN + 1}",
                                                  "Input data 0 1 data 0=8 1=8 2=1", *layers]) + "\n")
    (folder / "chain.bin").write_bytes((struct.pack("<64f", *[0.01] * 64) + struct.pack("<64f", *[1.0] * 64)) * CHAIN)


# One process, a normal heap. (1) Filled with ballast so that only `room` bytes are left,
# for room from nothing up: a failed allocation first collects, and the temporaries of a
# load or an extract are garbage soon after they are made, so only the smallest rooms
# fail. (2) The heap locked just before each step of loading and running the digits
# model: that step's first allocation fails. After every MemoryError the very Net that
# failed must load again and answer as before.
BALLAST = """
import gc, micropython, sys
import ncnn_mp
from mptest import DIGITS_MODEL, DIGITS_PARAM, STALE_NETS, Standardize, read, settle

param, weights = read(DIGITS_PARAM), read(DIGITS_MODEL)
x = ncnn_mp.Mat(8, 8, 1)
x.fill(3)


GOT = [None, None, None]  # made before any lock: storing into it allocates nothing


def step(net, i):
    if i == 0:
        net.clear()
    elif i == 1:
        net.register_custom_layer("Standardize", Standardize)
    elif i == 2:
        net.load_param(param)
    elif i == 3:
        net.load_model(weights)
    elif i == 4:
        GOT[0] = net.create_extractor()
    elif i == 5:
        GOT[0].input("data", x)
    elif i == 6:
        GOT[1] = GOT[0].extract("prob")
    else:
        GOT[2] = GOT[1].to_bytes()


def steps(net, lock_at):
    # The digits pipeline, one call at a time; the heap is locked before call `lock_at`.
    for i in range(8):
        if i == lock_at:
            micropython.heap_lock()
        try:
            step(net, i)
        finally:
            if i == lock_at:
                micropython.heap_unlock()
    out = GOT[2]
    GOT[0] = GOT[1] = GOT[2] = None
    return out


def run(net):
    return steps(net, -1)


expected = run(ncnn_mp.Net())
ballast = [None] * 8192  # made once: a list growing into the last free bytes would stop short
held = 0


def fill(room):
    # Ballast until about `room` bytes of heap are free (gc.mem_free() walks the whole
    # heap: called once per size, and per piece only for the last few).
    global held
    gc.collect()
    for size in (65536, 4096, 256):
        try:
            for _ in range((gc.mem_free() - room) // (size + 16) - 2):  # each piece: data + a 16-byte object
                ballast[held] = bytearray(size)
                held += 1
        except MemoryError:  # no gap that large left: on to smaller pieces
            pass
    for _ in range(2):  # the second time into what fill's own temporaries held
        try:
            while gc.mem_free() > room:  # one GC block at a time (a float is one), into the gaps
                ballast[held] = held + 0.5
                held += 1
        except MemoryError:
            pass
        gc.collect()


def unfill():
    global held
    for i in range(held):
        ballast[i] = None
    held = 0


def attempt(net, room, lock_at):
    if room is not None:
        fill(room)
    try:
        return "ok" if steps(net, lock_at) == expected else "WRONG"
    except MemoryError:
        return "MemoryError"
    except Exception as e:  # noqa: BLE001
        return type(e).__name__
    finally:
        unfill()


outcomes = {}
for room, lock_at in [(r, -1) for r in range(0, int(sys.argv[1]), int(sys.argv[2]))] + [(None, k) for k in range(8)]:
    net = ncnn_mp.Net()
    outcome = attempt(net, room, lock_at)
    gc.collect()
    healthy = run(net) == expected  # the same Net, memory back
    if lock_at >= 0:
        print("lock before step", lock_at, outcome)
    else:
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    if outcome not in ("ok", "MemoryError") or not healthy:
        print("FAIL room", room, "lock at", lock_at, outcome, "healthy after" if healthy else "BROKEN after")
    net = None
print("outcomes", sorted(outcomes.items()))
print("custom layers alive", settle(), "(allowed <=", str(STALE_NETS) + ")")  # stale stack words may hold a few
"""

# Custom layers that run out of memory in each of their methods.
LAYERS = """
import gc, micropython, sys
import ncnn_mp
from mptest import STALE_NETS, mat, packed, settle

PLAN = {}  # method -> what it does: "raise" MemoryError, "alloc" more than the heap, "lock" the heap


class Greedy(ncnn_mp.Layer):
    locks = 0  # heap_lock() calls to undo (one heap_unlock() too many would lock the heap)

    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def act(self, method):
        what = PLAN.get(method)
        if what == "raise":
            raise MemoryError("Greedy." + method)
        if what == "alloc":
            bytearray(1 << 30)
        if what == "lock":  # the next allocation, wherever it is, fails
            micropython.heap_lock()
            Greedy.locks += 1

    def load_param(self, pd):
        self.act("load_param")

    def load_model(self, mb):
        self.act("load_model")

    def create_pipeline(self, opt):
        self.act("create_pipeline")

    def forward(self, bottom, opt):
        self.act("forward")
        return bottom.clone()


TEXT = "7767517\\n2 2\\nInput data 0 1 data\\nGreedy g 1 1 data out\\n"
net = ncnn_mp.Net()
net.register_custom_layer("Greedy", Greedy)


def run():
    net.load_param_mem(TEXT)
    net.load_model(b"")
    with net.create_extractor() as ex:
        ex.input("data", mat(1, 2))
        return packed(ex.extract("out"))


for method in ("load_param", "load_model", "create_pipeline", "forward"):
    for what in ("raise", "alloc", "lock"):
        PLAN.clear()
        PLAN[method] = what
        result = "no error"
        try:
            run()
        except Exception as e:  # MemoryError expected; nothing here may allocate
            result = e
        while Greedy.locks:
            micropython.heap_unlock()
            Greedy.locks -= 1
        result = result if isinstance(result, str) else type(result).__name__
        PLAN.clear()
        print(method, what, "->", result, "| then", run())

# The heap locked around a whole extract (no Python layer): MemoryError, then it works.
net = ncnn_mp.Net()
net.load_param_mem("7767517\\n2 2\\nInput data 0 1 data\\nReLU r 1 1 data out\\n")
net.load_model(b"")
ex = net.create_extractor()
ex.input("data", mat(-1, 2))
micropython.heap_lock()
try:
    ex.extract("out")
    result = "no error"
except MemoryError:
    result = "MemoryError"
micropython.heap_unlock()
print("extract with the heap locked ->", result, "| then", packed(ex.extract("out")))
ex = net = None
print("custom layers alive", settle(), "(allowed <=", str(STALE_NETS) + ")")  # stale stack words may hold a few
"""


def assert_no_layer_left(stdout: str) -> None:
    """The script's last leak check: Python layers ncnn still holds after the collections,
    within what stale stack words may keep (mptest.STALE_NETS)."""
    m = re.search(r"^custom layers alive (\d+) \(allowed <= (\d+)\)$", stdout, re.M)
    assert m, stdout
    print(m.group(0))
    assert int(m.group(1)) <= int(m.group(2)), stdout


def test_tiny_heaps(micropython: MicroPython, tmp_path: Path) -> None:
    """Heaps too small for the chain of Python layers: a MemoryError, never a crash, at
    each stage in turn as the heap grows (the interpreter's start, the import, load_param,
    load_model, extract), then the right answer. Heap sizes every 256 bytes from 2 KiB,
    then every 32 bytes over the top 6 KiB of the failing ones, where extract's windows
    are (a few hundred bytes each, between sizes at which the extract succeeds: where
    the collections fall decides). Prints which stage each size reached."""
    write_chain(tmp_path)
    expected = f"ok {round(3 - 0.01 * CHAIN, 4)}"

    def outcome(size: int) -> str:
        r = micropython.run_source(TINY, str(tmp_path), heapsize=str(size), timeout=60)
        if r.returncode != 0:  # too small for the interpreter itself: it says so, and exits
            assert r.returncode == 1 and "MemoryError" in r.stderr, f"heapsize={size}\n" + r.explain()
            return "interpreter"
        out = r.stdout.strip()
        assert out == expected or out in {f"MemoryError {stage}" for stage in STAGES}, f"heapsize={size}\n" + r.explain()
        return out

    seen = {size: outcome(size) for size in range(2048, 48 * 1024, 256)}
    top = max(size for size, out in seen.items() if out != expected)
    assert top < 48 * 1024 - 2048, f"heaps up to {top} bytes still fail: the sweep does not reach the always-ok sizes"
    seen.update({size: outcome(size) for size in range(max(2048, top - 6144), top + 512, 32)})
    runs: list[list[object]] = []  # [first size, last size, outcome]
    for size in sorted(seen):
        if runs and runs[-1][2] == seen[size]:
            runs[-1][1] = size
        else:
            runs.append([size, size, seen[size]])
    print("\n".join(f"heapsize {a}..{b}: {out}" for a, b, out in runs))
    reached = set(seen.values())
    # Under the sanitizers the firmware's own allocations differ: the extract's windows (where
    # the collections fall) were not met by the sweep there; the plain and valgrind runs keep
    # the whole demand (and test_allocations_failing fills the heap before each step anyway).
    stages = STAGES if not SANITIZED else STAGES[:-1]
    missing = [s for s in ["interpreter", *(f"MemoryError {stage}" for stage in stages), expected] if s not in reached]
    assert not missing, f"never seen: {missing}\n" + "\n".join(f"heapsize {a}..{b}: {out}" for a, b, out in runs)


def test_allocations_failing(micropython: MicroPython, digits_dir: Path) -> None:
    r = micropython.run_source(BALLAST, "2048", "16", timeout=300, cwd=MP_TESTS)
    assert r.returncode == 0, r.explain()
    assert "FAIL" not in r.stdout, r.stdout
    # Out of room: MemoryError or (with room enough, the run's temporaries collected) success.
    assert "outcomes [('MemoryError', " in r.stdout and "('ok', " in r.stdout and "WRONG" not in r.stdout, r.stdout
    locked = dict(ln.rsplit(" ", 1) for ln in r.stdout.splitlines() if ln.startswith("lock before step"))
    # clear and register_custom_layer allocate nothing on MicroPython's heap.
    assert locked["lock before step 0"] == locked["lock before step 1"] == "ok", r.stdout
    # Every other step allocates: load_param and load_model make the Python layer,
    # extract calls it, create_extractor, input and to_bytes make wrappers.
    for step in (2, 3, 4, 5, 6, 7):
        assert locked[f"lock before step {step}"] == "MemoryError", r.stdout
    assert_no_layer_left(r.stdout)


def test_custom_layers_out_of_memory(micropython: MicroPython) -> None:
    r = micropython.run_source(LAYERS, cwd=MP_TESTS, timeout=60)
    assert r.returncode == 0, r.explain()
    lines = r.stdout.splitlines()
    results = [ln for ln in lines if " -> " in ln]
    assert len(results) == 13, r.stdout
    for ln in results:
        if ln.startswith("extract with the heap locked"):
            assert ln.endswith("-> MemoryError | then [0.0, 2.0]"), r.stdout
        else:
            assert ln.endswith("-> MemoryError | then [1.0, 2.0]"), r.stdout
    assert lines[-1].startswith("custom layers alive"), r.stdout
    assert_no_layer_left(r.stdout)


SIZES = """
import ncnn_mp
M = ncnn_mp.Mat
cases = [
    ("resize 4x4 to 16384x16384", lambda: M.from_pixels_resize(bytes(16), M.PIXEL_GRAY, 4, 4, 16384, 16384)),
    ("roi resize to 16384x16384", lambda: M.from_pixels_roi_resize(bytes(48), M.PIXEL_RGB, 4, 4, 0, 0, 2, 2, 16384, 16384)),
    ("to_pixels_resize 16384x16384", lambda: M(4, 4, 1).to_pixels_resize(M.PIXEL_GRAY, 16384, 16384)),
    ("font 1024 on 64x64", lambda: M.draw_text(bytearray(64 * 64), 64, 64, 1, "A", 0, 0, 1024, 255)),
]
for label, f in cases:
    try:
        f()
        print(label, "ok")
    except MemoryError:
        print(label, "MemoryError")
print("still works", M.from_pixels(bytes(4), M.PIXEL_GRAY, 2, 2).w)
"""


def test_sizes_checked_before_ncnn_allocates(micropython: MicroPython, tmp_path: Path) -> None:
    """Issue 21's case 7: the pixel helpers' buffers come from the caller's numbers, and ncnn
    allocates some without checking (then writes through NULL). Under an address-space limit,
    as on any device, those larger than what is left raise MemoryError; the process goes on."""
    import resource
    import subprocess

    if SANITIZED:
        pytest.skip("ASan reserves its shadow memory up front: it cannot run under an address-space limit")
    script = tmp_path / "sizes.py"
    script.write_text(SIZES)
    limit = 768 << 20

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    p = subprocess.run([str(micropython.binary), str(script)], capture_output=True, text=True, timeout=120,
                       preexec_fn=limited, env=micropython.env)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert lines[:3] == ["resize 4x4 to 16384x16384 MemoryError", "roi resize to 16384x16384 MemoryError",
                         "to_pixels_resize 16384x16384 MemoryError"], p.stdout
    assert lines[3:] == ["font 1024 on 64x64 ok", "still works 2"], p.stdout

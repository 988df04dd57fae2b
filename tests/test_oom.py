"""Out of memory: loads and extracts on a tiny MicroPython heap, and custom layers that run
out of memory (or raise MemoryError), end in MemoryError, and the process and the Net
still work afterwards."""

from __future__ import annotations

from pathlib import Path

from conftest import MP_TESTS, MicroPython

# Loads the digits model (its Standardize layer is Python) and classifies one image;
# prints "ok <label>" or "MemoryError <where>".
TINY = """
import sys
sys.path.append(%(mp)r)
where = "import"
try:
    import gc, ncnn_mp
    from mptest import DIGITS_MODEL, DIGITS_PARAM, digits_net, read
    where = "load"
    net = digits_net()
    net.load_param(DIGITS_PARAM)
    net.load_model(DIGITS_MODEL)
    where = "extract"
    x = ncnn_mp.Mat(8, 8, 1)
    x.fill(3)
    with net.create_extractor() as ex:
        ex.input("data", x)
        out = ex.extract("prob")
    print("ok", max(range(10), key=lambda i: out[i]))
except MemoryError:
    print("MemoryError", where)
"""

# One process, a normal heap. (1) Filled with ballast so that only `room` bytes are left,
# for room from nothing up: a failed allocation first collects, and the temporaries of a
# load or an extract are garbage soon after they are made, so only the smallest rooms
# fail. (2) The heap locked just before each step of loading and running the digits
# model: that step's first allocation fails. After every MemoryError the very Net that
# failed must load again and answer as before.
BALLAST = """
import gc, micropython, sys
sys.path.append(%(mp)r)
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
print("custom layers alive", settle() <= STALE_NETS)  # stale stack words may hold a few
"""

# Custom layers that run out of memory in each of their methods.
LAYERS = """
import gc, micropython, sys
sys.path.append(%(mp)r)
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
print("custom layers alive", settle() <= STALE_NETS)  # stale stack words may hold a few
"""


def test_tiny_heaps(micropython: MicroPython, digits_dir: Path) -> None:
    """Heaps from 2 KiB to 40 KiB, 256 bytes apart: too small a heap is a MemoryError
    somewhere (before the script runs, while importing, loading or extracting), never a crash."""
    seen = set()
    for size in range(2048, 40 * 1024, 256):
        r = micropython.run_source(TINY % {"mp": str(MP_TESTS)}, heapsize=str(size), timeout=60, cwd=MP_TESTS)
        if r.returncode != 0:  # too small for the interpreter itself: it says so, and exits
            assert r.returncode == 1 and "MemoryError" in r.stderr, f"heapsize={size}\n" + r.explain()
            seen.add("interpreter")
            continue
        assert r.stdout in ("ok 7\n", "MemoryError import\n", "MemoryError load\n", "MemoryError extract\n"), \
            f"heapsize={size}\n" + r.explain()
        seen.add(r.stdout.strip())
    assert {"interpreter", "MemoryError import", "ok 7"} <= seen, seen


def test_allocations_failing(micropython: MicroPython, digits_dir: Path) -> None:
    r = micropython.run_source(BALLAST % {"mp": str(MP_TESTS)}, "2048", "16", timeout=300, cwd=MP_TESTS)
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
    assert "custom layers alive True" in r.stdout, r.stdout


def test_custom_layers_out_of_memory(micropython: MicroPython) -> None:
    r = micropython.run_source(LAYERS % {"mp": str(MP_TESTS)}, cwd=MP_TESTS, timeout=60)
    assert r.returncode == 0, r.explain()
    lines = r.stdout.splitlines()
    results = [ln for ln in lines if " -> " in ln]
    assert len(results) == 13, r.stdout
    for ln in results:
        if ln.startswith("extract with the heap locked"):
            assert ln.endswith("-> MemoryError | then [0.0, 2.0]"), r.stdout
        else:
            assert ln.endswith("-> MemoryError | then [1.0, 2.0]"), r.stdout
    assert lines[-1] == "custom layers alive True", r.stdout

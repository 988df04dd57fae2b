# SPDX-License-Identifier: MIT
"""Python layers across soft reboots (issue 11, case 5), on the QEMU board in one run.

A board that soft-reboots (ports/qemu, esp32: Ctrl-D at the REPL) sweeps the whole Python
heap and re-initialises the VM, but neither re-initialises the heap nor resets C state.
ncnn_mp roots the Python objects ncnn can reach (layer instances, creators) in a dict held
by a root pointer (ncnn_mp/binding/state.c). If that pointer survives the reboot it points at
freed heap: the next register_custom_layer writes into whatever the heap holds there now.

Each test: script 1 leaves Python layers behind in some state, then twice a soft reboot
and script AFTER, which first fills the freed heap with zeroed bytearrays and lists of a
known value (a write through a stale pointer changes one of them), then uses Python layers
again and checks every figure, the filler, and the heap (collections, many allocations).

Before the fix (root pointer kept across the reboot), in all three tests script 2 printed
the right figures but "intact after load False": register_custom_layer had rebuilt the
freed dict inside a zeroed filler bytearray (used 2, alloc 2, a new table). One line more
in AFTER moved the objects and made the same call a HardFault (a string's bytes read as
the dict's table pointer); another gave NameError in AFTER's own corrupted bytecode.
"""

from __future__ import annotations

import re

import pytest

from conftest import QemuBoard, Result

pytestmark = pytest.mark.mcu

# The digits model by blob and type numbers (binary params work on every build), and the
# first held-out image's probabilities, to compare across reboots.
PRELUDE = """
import gc
import micropython
import ncnn_mp
from mptest import DIGITS, DIGITS_MODEL, Standardize, read

DATA, PROB = 0, 5
images = read(DIGITS + "/digits_test.bin")
N = len(images) // 65

def image(i):
    m = ncnn_mp.Mat(8, 8, 1)
    for j in range(64):
        m[j] = images[i * 64 + j]
    return m

def digits_net(layer=Standardize):
    net = ncnn_mp.Net()
    net.register_custom_layer(ncnn_mp.CUSTOM_BIT | 0, layer)
    net.load_param_bin(read(DIGITS + "/digits.param.bin"))
    net.load_model(read(DIGITS_MODEL))
    return net

def scores(m):
    return [round(x, 4) for x in memoryview(m)]
"""

# Every script 1 starts with ballast, so that the roots dict is made above the blocks
# script AFTER's own compiled code takes, and lands in its filler: a write into the filler
# is seen and named, where one into AFTER's bytecode shows as any error at all.
BALLAST = """
ballast = bytearray(24 * 1024)
"""

# Script 1, variant "kept": ends normally with a loaded Net, an Extractor that extracted,
# Mats, and a second Net that only registered a creator, all referenced from globals.
KEPT = BALLAST + PRELUDE + """
net = digits_net()
ex = net.create_extractor()
ex.input(DATA, image(0))
prob = ex.extract(PROB)
print("first", scores(prob))
spare = ncnn_mp.Net()
spare.register_custom_layer(ncnn_mp.CUSTOM_BIT | 0, lambda: Standardize())
held = [net, ex, prob, image(1)]
print("live", ncnn_mp.live_custom_layers())
"""

# Variant "mid-use": no cleanup at all: an Extractor given its input but never extracted,
# its Net referenced from a global too, and a layer instance that references its own Net
# (a cycle through ncnn_mp's roots).
MID_USE = BALLAST + PRELUDE + """
class Holding(Standardize):
    def __init__(self):
        super().__init__()
        self.net = None

net = digits_net(Holding)
with net.create_extractor() as done:
    done.input(DATA, image(0))
    print("first", scores(done.extract(PROB)))
ex = net.create_extractor()
ex.input(DATA, image(1))
second = net.create_extractor()
state = {"net": net, "ex": ex, "second": second}
print("live", ncnn_mp.live_custom_layers())
"""

# Variant "readers": the Net loaded through Python DataReaders, and readers kept in globals
# in the middle of their data: one under a ModelBin that read part of it, one whose text
# scan left a look-ahead in C memory (freed by the reader's finaliser in the reboot's sweep).
READERS = BALLAST + PRELUDE + """
class Chunks(ncnn_mp.DataReader):
    def __init__(self, data):
        super().__init__()
        self.data, self.pos = memoryview(data), 0
    def read(self, n):
        piece = self.data[self.pos:self.pos + min(n, 7)]
        self.pos += len(piece)
        return piece

net = ncnn_mp.Net()
net.register_custom_layer(ncnn_mp.CUSTOM_BIT | 0, Standardize)
net.load_param_bin(Chunks(read(DIGITS + "/digits.param.bin")))
net.load_model(Chunks(read(DIGITS_MODEL)))
with net.create_extractor() as ex:
    ex.input(DATA, image(0))
    print("first", scores(ex.extract(PROB)))
half = Chunks(read(DIGITS_MODEL))
mb = ncnn_mp.ModelBin(from_datareader=half)
mb.load(3, 1)
text = Chunks(read(DIGITS + "/digits.param"))
named = ncnn_mp.Net()
named.register_custom_layer("Standardize", Standardize)
named.load_param(text)
held = [net, half, mb, text, named]
print("live", ncnn_mp.live_custom_layers())
"""

# Variant "raises": the script dies in the middle, from inside a Python layer's forward
# during an extract, with the Net and its layers alive.
RAISES = BALLAST + PRELUDE + """
class Failing(Standardize):
    calls = 0
    def forward_inplace(self, blob, opt):
        Failing.calls += 1
        if Failing.calls == 2:
            raise ValueError("layer failed on purpose")
        return super().forward_inplace(blob, opt)

net = digits_net(Failing)
with net.create_extractor() as ex:
    ex.input(DATA, image(0))
    print("first", scores(ex.extract(PROB)))
print("live", ncnn_mp.live_custom_layers())
ex = net.create_extractor()
ex.input(DATA, image(1))
prob = ex.extract(PROB)
print("not reached")
"""

# Scripts 2 and 3. The filler is made before anything else, so it takes the blocks at the
# bottom of the heap, where script 1's objects were (the roots dict among them).
AFTER = """
import ncnn_mp
print("live at start", ncnn_mp.live_custom_layers())
zeros = [bytearray(48) for _ in range(600)]
sevens = [[7] * 12 for _ in range(300)]

def intact():
    return not any(any(b) for b in zeros) and all(s == [7] * 12 for s in sevens)
""" + PRELUDE + """
net = digits_net()
print("intact after load", intact())
print("live after load", ncnn_mp.live_custom_layers())
for _ in range(3):
    gc.collect()
more = [bytearray(32) for _ in range(200)]  # takes what the collections freed
correct = 0
for i in range(N):
    with net.create_extractor() as ex:
        ex.input(DATA, image(i))
        prob = ex.extract(PROB)
    if i == 0:
        print("first", scores(prob))
    s = list(memoryview(prob))
    correct += s.index(max(s)) == images[N * 64 + i]
    if i % 50 == 0:
        gc.collect()
print("images", N, "correct", correct)
print("intact after extracts", intact(), not any(any(b) for b in more))
net.clear()
print("live after clear", ncnn_mp.live_custom_layers())
del net, ex, prob, more
for _ in range(3):
    gc.collect()
for _ in range(20):  # the allocator over the whole heap, collecting when it is full
    many = [str(i) * 3 for i in range(500)]
gc.collect()
print("heap ok", sum(len(s) for s in many), intact())
micropython.mem_info()
"""

AFTER_EXPECTED = """live at start 0
intact after load True
live after load 1
{first}
images 450 correct 441
intact after extracts True True
live after clear 0
heap ok 4170 True
"""

# micropython.mem_info()'s figures vary; that it printed them (walking the heap's tables)
# is what is checked.
MEM_INFO = re.compile(r"^(mem: |stack: |GC: | No\. of |\s*$).*\n?", re.M)


def first_line(r: Result) -> str:
    lines = [line for line in r.stdout.splitlines() if line.startswith("first ")]
    assert lines, r.explain()
    return lines[0]


def check_after(runs: list[Result], first: str) -> None:
    for n, r in enumerate(runs[1:], 2):
        assert r.returncode == 0, f"script {n} (after soft reboot {n - 1}): " + r.explain()
        assert "GC: total: " in r.stdout, r.explain()
        out = MEM_INFO.sub("", r.stdout)
        assert out == AFTER_EXPECTED.format(first=first), f"script {n}: " + r.explain()


@pytest.fixture(scope="module", params=["qemu", "rv32", "xtensa", "esp32core"])
def board(request: pytest.FixtureRequest) -> QemuBoard:
    """Each architecture's board (the port's soft reboot is the same code on both)."""
    return QemuBoard(request.param)


def test_layers_after_soft_reboot_with_objects_kept(board: QemuBoard) -> None:
    runs = board.run_sequence([KEPT, AFTER, AFTER], timeout=600)
    assert runs[0].returncode == 0, runs[0].explain()
    first = first_line(runs[0])
    assert runs[0].stdout == f"{first}\nlive 1\n", runs[0].explain()
    check_after(runs, first)


def test_layers_after_soft_reboot_mid_use(board: QemuBoard) -> None:
    runs = board.run_sequence([MID_USE, AFTER, AFTER], timeout=600)
    assert runs[0].returncode == 0, runs[0].explain()
    first = first_line(runs[0])
    assert runs[0].stdout == f"{first}\nlive 1\n", runs[0].explain()
    check_after(runs, first)


def test_readers_after_soft_reboot(board: QemuBoard) -> None:
    runs = board.run_sequence([READERS, AFTER, AFTER], timeout=600)
    assert runs[0].returncode == 0, runs[0].explain()
    first = first_line(runs[0])
    assert runs[0].stdout == f"{first}\nlive 2\n", runs[0].explain()
    check_after(runs, first)


def test_layers_after_soft_reboot_when_the_script_raised(board: QemuBoard) -> None:
    runs = board.run_sequence([RAISES, AFTER, AFTER], timeout=600)
    r = runs[0]
    assert r.returncode == 1, r.explain()
    first = first_line(r)
    printed, _, traceback = r.stdout.partition("Traceback (most recent call last):\n")
    assert printed == f"{first}\nlive 1\n", r.explain()
    assert traceback.endswith("ValueError: layer failed on purpose\n"), r.explain()
    check_after(runs, first)

# SPDX-License-Identifier: MIT
"""ncnn_mp_lib/detection.py's viper fast paths are as safe as its plain ones: over random
arguments, right and wrong (offsets, row counts, columns and steps that leave the buffer, negative
ones, k below 0 or past the end, buffers of other item sizes and types), candidates() and
top_k() give the same result or raise the same exception with fast=True as with fast=False.
Before the bounds checks, the fast scans read past the buffer they were given (garbage, or
SIGSEGV with a wrong grid) where the plain loop raised IndexError."""

from __future__ import annotations

import pytest

from conftest import MicroPython

# (ncnn_mp_lib: the checkout's root is on MICROPYPATH on Unix, conftest's harness; frozen in on a board)
PATHS = """
import array, random
from ncnn_mp_lib import detection
assert detection.FAST  # (the firmware has viper)
random.seed(5)

fast_runs = [0]
for name in ("_scan_words", "_top_words"):  # count the fast loops that ran: the test must reach them
    def counted(*args, _f=getattr(detection, name)):
        fast_runs[0] += 1
        return _f(*args)
    setattr(detection, name, counted)


def outcome(f):
    try:
        return f()
    except Exception as e:
        return type(e).__name__


def buffer(n):
    values = [random.choice((0.0, 0.25, 0.5, 1.0, -1.0)) if random.random() < 0.4 else random.random()
              for _ in range(n)]
    kind = random.choice(("f", "f", "f", "d", "i", "bytes", "list"))
    if kind == "bytes":
        return memoryview(bytearray(random.getrandbits(8) for _ in range(4 * n)))
    if kind == "list":
        return values
    if kind == "i":
        return memoryview(array.array("i", [int(v * 100) for v in values]))
    return memoryview(array.array(kind, values))


mismatches = 0
for trial in range(1500):
    rows, cols = random.randint(-2, 12), random.randint(-1, 6)
    step, offset = random.randint(-3, 8), random.randint(-6, 12)
    scores = buffer(random.randint(0, 60))
    threshold = random.choice((0.1, 0.5, 0.9, 1, -0.5, 0.0))
    k = random.choice((random.randint(-3, 70), 0, 1))
    a = outcome(lambda: detection.candidates(scores, offset, rows, cols, step, threshold))
    b = outcome(lambda: detection.candidates(scores, offset, rows, cols, step, threshold, fast=False))
    c = outcome(lambda: detection.top_k(scores, k))
    d = outcome(lambda: detection.top_k(scores, k, fast=False))
    if a != b or c != d:
        mismatches += 1
        if mismatches <= 5:
            print("differs:", (offset, rows, cols, step, threshold, k, len(scores)), a, b, c, d)
print("mismatches", mismatches)
print("fast runs", fast_runs[0] > 500)
"""


def test_fast_and_plain_agree_on_any_arguments(micropython: MicroPython) -> None:
    assert micropython.check(PATHS, timeout=300).split() == ["mismatches", "0", "fast", "runs", "True"]


@pytest.mark.mcu
@pytest.mark.parametrize("profile", ["qemu", "rv32"])
def test_fast_and_plain_agree_on_the_boards(profile: str) -> None:
    """The same on the 32-bit boards (frozen detection.py), where viper's words are signed."""
    from ci.qemu import run_script
    from conftest import QemuBoard

    r = run_script(profile, QemuBoard(profile).binary, PATHS.encode(), timeout=600)
    assert r.returncode == 0 and r.output.split() == ["mismatches", "0", "fast", "runs", "True"], r.output

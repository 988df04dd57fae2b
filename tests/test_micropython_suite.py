"""MicroPython's own test suite (its tests/run-tests.py: basics, float, micropython, misc,
thread) on the Unix firmware with ncnn_mp in it, so that a change of ncnn_mp's that breaks
MicroPython shows at once. One did: the 275-character message ncnn_mp added to size
MicroPython 1.25's decompression buffer made every compressed message, MicroPython's own
included, come out empty when raised with the heap locked
(micropython/heapalloc_exc_compressed_emg_exc.py; ncnn_mp/checks.c ncnn_mp_longest_message)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import MicroPython

SUITES = ["basics", "float", "micropython", "misc", "thread"]


def test_micropython_suite(micropython: MicroPython, tmp_path: Path) -> None:
    from ci.sources import micropython_source

    tests = micropython_source() / "tests"
    p = subprocess.run([sys.executable, "run-tests.py", "--result-dir", str(tmp_path), "-d", *SUITES],
                       cwd=tests, capture_output=True, text=True, timeout=900,
                       env={"PATH": "/usr/bin:/bin", "MICROPY_MICROPYTHON": str(micropython.binary)})
    summary = [line for line in p.stdout.splitlines() if "tests performed" in line or "failed" in line]
    assert p.returncode == 0, "\n".join(summary) + "\n" + p.stdout[-3000:] + p.stderr[-2000:]
    performed = [line for line in summary if "tests performed" in line]
    assert performed and int(performed[0].split()[0]) > 700, summary  # (the suites ran, not a few of them)

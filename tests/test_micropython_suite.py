# SPDX-License-Identifier: MIT
"""MicroPython's own test suite (its tests/run-tests.py: basics, float, micropython, misc,
thread) on the Unix firmware with ncnn_mp in it, so that a change of ncnn_mp's that breaks
MicroPython shows at once; and (basics, float, micropython, misc: the board has no threads) on
the esp32core board, the ESP32's windowed core built by clang 22, where run-tests.py talks to the
firmware's raw REPL through QEMU's console as it talks to a board on a serial port. One did: the 275-character message ncnn_mp added to size
MicroPython 1.25's decompression buffer made every compressed message, MicroPython's own
included, come out empty when raised with the heap locked
(micropython/heapalloc_exc_compressed_emg_exc.py; ncnn_mp/binding/checks.c ncnn_mp_longest_message)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import MicroPython, QemuBoard

SUITES = ["basics", "float", "micropython", "misc", "thread"]
BOARD_SUITES = ["basics", "float", "micropython", "misc"]  # (the board has no threads)


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


def _kill_tagged(tag: str) -> None:
    """Every process whose command line holds `tag` (the board's QEMU, left running by a run-tests.py
    that timed out: pyboard.py starts it in a session of its own)."""
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and tag.encode() in (proc / "cmdline").read_bytes():
                os.kill(int(proc.name), signal.SIGKILL)
        except OSError:
            pass


@pytest.mark.mcu
def test_micropython_suite_on_esp32core(tmp_path: Path) -> None:
    """The windowed core's start-up, window handlers, setjmp nlr, picolibc and clang 22's code under
    MicroPython's own tests (676 run here, 29 skipped by run-tests.py for what the port leaves
    out). Not --via-mpy --emit native: MicroPython 1.25's xtensawin emitter gives up on long
    functions ("xtensa bccz out of range" in mpy-cross, basics/frozenset_binop.py) and writes an
    .mpy anyway, which hangs the run; tests/mp runs the viper scripts on this board instead."""
    from ci.qemu import qemu_command
    from ci.sources import micropython_source

    board = QemuBoard("esp32core")
    # QEMU itself, not under timeout(1): pyboard.py ends it with SIGTERM to its process group, which
    # timeout(1) did not pass on (QEMU kept polling a closed console); -name tags it for the cleanup.
    tag = f"ncnn-mp-suite-{os.getpid()}"
    qemu = qemu_command("esp32core", board.binary, timeout=900)
    qemu = shlex.join(qemu[qemu.index("qemu-system-xtensa"):] + ["-name", tag])
    try:
        p = subprocess.run([sys.executable, "run-tests.py", "-t", f"exec:{qemu}", "--result-dir", str(tmp_path),
                            "-d", *BOARD_SUITES], cwd=micropython_source() / "tests", capture_output=True,
                           text=True, timeout=900, env={"PATH": "/usr/bin:/bin"})
    finally:
        _kill_tagged(tag)
    summary = [line for line in p.stdout.splitlines() if "tests performed" in line or "failed" in line]
    assert p.returncode == 0, "\n".join(summary) + "\n" + p.stdout[-3000:] + p.stderr[-2000:]
    performed = [line for line in summary if "tests performed" in line]
    assert performed and int(performed[0].split()[0]) > 600, summary

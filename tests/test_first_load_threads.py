# SPDX-License-Identifier: MIT
"""Threads' first loads at once on the sanitizer firmware (make sanitize), many times: glibc
starts its malloc at its first call, without a lock, and under AddressSanitizer that first call
was ncnn_mp's mallinfo2 in whichever threads loaded first (tests/mp/ncnn_mp_first_load_threads.py
says what it did). Before ncnn_mp took its lock around the call, about 1 run in 7 ended in an
abort or SIGSEGV inside glibc's malloc; on other firmwares glibc's malloc has started before any
thread, so this runs only there."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SANITIZED, MicroPython

SCRIPT = Path(__file__).resolve().parent / "mp" / "ncnn_mp_first_load_threads.py"
RUNS = 60  # (0.85^60: a race of that rate is missed 1 time in 16,000)


@pytest.mark.skipif(not SANITIZED,
                    reason="only a firmware whose malloc is not glibc's (make sanitize) calls glibc's first from threads")
def test_first_loads_in_threads_at_once(micropython: MicroPython) -> None:
    for i in range(RUNS):
        r = micropython.run(SCRIPT, timeout=120)
        assert r.returncode == 0 and r.stdout == "loaded 4 failed []\n", f"run {i}: {r.explain()}"

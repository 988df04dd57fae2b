# SPDX-License-Identifier: MIT
"""The soak command's short version: 20 s of the mixed workload, RSS and heap flat."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import REPO, MicroPython


def test_soak_short(micropython: MicroPython, digits_dir: Path) -> None:
    p = subprocess.run([sys.executable, str(REPO / "tests" / "soak" / "soak.py"), str(micropython.binary), "20", "2"],
                       capture_output=True, text=True, timeout=120, env=micropython.env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "flat" in p.stdout.splitlines()[-1]

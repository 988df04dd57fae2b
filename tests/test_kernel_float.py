# SPDX-License-Identifier: MIT
"""ncnn_mp/kernels/kernel_float.h (the kernels' float steps in integer arithmetic, used on soft-float
RISC-V, and lx106's high multiply from halves) against this machine's arithmetic, bit for bit: tests/kernels/float_steps_check.cpp
built with the host's C++ compiler and run over random operands of every class."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a host C++ compiler (g++)")
def test_float_steps_equal_the_hardware(tmp_path: Path) -> None:
    exe = tmp_path / "float_steps_check"
    # (-ffp-contract=off: the reference operations as written, no fused multiply-add)
    subprocess.run(["g++", "-O2", "-Wall", "-Werror", "-ffp-contract=off", f"-I{REPO / 'ncnn_mp' / 'kernels'}", "-o", str(exe),
                    str(REPO / "tests" / "kernels" / "float_steps_check.cpp")], check=True)
    r = subprocess.run([str(exe), "5000000"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == ("mul_ff, add_ff, mul_if, recip_ff: 5000000 draws each, equal to the hardware's; "
                        "mul_high_halves, mul_high_split: 20000000 each, equal\n")

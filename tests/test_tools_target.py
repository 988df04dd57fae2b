# SPDX-License-Identifier: MIT
"""ncnn_mp_tools without the build: no module of it imports ci, a firmware given by its path
answers what it was built with, and what is not a firmware is refused in one line."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, MicroPython


def test_no_tool_imports_ci() -> None:
    """The tools install and run without the checkout: none of their modules (probes aside,
    which run on a firmware) imports the build harness."""
    found = []
    for path in sorted((REPO / "ncnn_mp_tools").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [f"{path.name}: {n}" for n in names if n == "ci" or n.startswith("ci.")]
    assert not found, found


def test_layer_table_is_current() -> None:
    """ncnn_mp_tools/ncnn_layers.json is what ci/ncnn_layers.py reads from the pinned ncnn now."""
    from ci.ncnn_layers import TABLE, text

    assert TABLE.read_text() == text(), "stale: python3 -m ci.ncnn_layers"


def test_a_unix_firmware_by_its_path(micropython: MicroPython, micropython_memcheck: MicroPython) -> None:
    from ncnn_mp_tools.target import from_path

    plain, kernels = from_path(micropython.binary), from_path(micropython_memcheck.binary)
    assert plain.board is None and plain.names and not plain.kernels and plain.layers is None, plain
    assert kernels.kernels, kernels


@pytest.mark.parametrize("make, says", [
    (lambda d: d / "missing", "no firmware at"),
    (lambda d: (d / "notes.txt").write_text("hello") and d / "notes.txt", "does not run here"),
    (lambda d: Path("/bin/echo"), "did not answer as a MicroPython with ncnn_mp"),
])
def test_what_is_not_a_firmware_is_refused(tmp_path: Path, make: object, says: str) -> None:
    """Through ncnn-mp's command line: exit status 2 and one line naming the file."""
    path = make(tmp_path)  # type: ignore[operator]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-m", "ncnn_mp_tools.cli", "preflight", "--firmware", str(path), "m.param"],
                       capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr

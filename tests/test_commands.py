# SPDX-License-Identifier: MIT
"""The commands and the Python packages: one list of commands (ci/tool.py's COMMANDS) behind
both the Makefile and `python3 -m ci.tool`, the user tools run as `python3 -m ncnn_mp_tools.<tool>`,
and no CPython file stitching sys.path together."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

import pytest

from ci.tool import COMMANDS, help_text
from conftest import REPO


def make_targets() -> dict[str, list[str]]:
    """The Makefile's targets, each with its recipe lines."""
    targets: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in (REPO / "Makefile").read_text().splitlines():
        m = re.match(r"^([a-z][a-z0-9-]*):(?!=)", line)
        if m:
            current = targets.setdefault(m.group(1), [])
        elif line.startswith("\t") and current is not None:
            current.append(line)
        elif not line.startswith("#"):
            current = None
    return targets


def test_every_make_target_is_a_command_and_back() -> None:
    """Each Makefile target is the tool's command of the same name (its recipe runs
    `$(TOOL) NAME`), and each command is a target; .PHONY names them all."""
    targets = make_targets()
    assert sorted(targets) == sorted(c.name for c in COMMANDS)
    for name, recipe in targets.items():
        assert re.search(rf"\$\(TOOL\) {re.escape(name)}(\s|$)", " ".join(recipe)), (name, recipe)
    (phony,) = re.findall(r"^\.PHONY: (.*)$", (REPO / "Makefile").read_text(), re.M)
    assert sorted(phony.split()) == sorted(targets)
    first = next(iter(targets))
    assert first == "demo", "plain `make` runs the demo"


def test_make_help_is_the_tools_help() -> None:
    made = subprocess.run(["make", "-s", "help"], cwd=REPO, capture_output=True, text=True)
    tool = subprocess.run([sys.executable, "-m", "ci.tool", "--help"], cwd=REPO, capture_output=True, text=True)
    assert made.returncode == 0 and tool.returncode == 0, made.stderr + tool.stderr
    assert made.stdout == tool.stdout == help_text()
    for c in COMMANDS:
        assert re.search(rf"^  {re.escape(c.name)}\b", made.stdout, re.M), c.name


@pytest.mark.parametrize("tool, args, says", [
    ("quantize_int8", ["--help"], "Quantize an ncnn model to int8"),
    ("romfs_pack", ["--help"], "Pack model files into a MicroPython ROMFS image"),
    ("param_to_bin", [], "usage: python3 -m ncnn_mp_tools.param_to_bin model.param model.param.bin"),
    ("preflight", [], "ncnn_mp preflight: no firmware given: give --dist FOLDER"),
    ("cli", ["--help"], "ncnn-mp model      an ONNX (or ncnn) model to a board"),
    ("models", ["--help"], "usage: python3 -m ncnn_mp_tools.models [-h] {fetch,list,path}"),
])
def test_user_tools_run_as_modules(tool: str, args: list[str], says: str) -> None:
    """From the checkout's root, with nothing on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-m", f"ncnn_mp_tools.{tool}", *args], cwd=REPO, capture_output=True,
                       text=True, env=env)
    assert says in r.stdout + r.stderr, r.stdout + r.stderr


def test_every_module_opens_with_a_one_line_summary() -> None:
    for package in ("ci", "ncnn_mp_tools"):
        for path in sorted((REPO / package).glob("*.py")):
            doc = ast.get_docstring(ast.parse(path.read_text()))
            assert doc, f"{path.relative_to(REPO)}: no docstring"
            assert doc.split("\n")[1:2] in ([], [""]), f"{path.relative_to(REPO)}: the summary is not one line"


def test_no_python_file_stitches_sys_path() -> None:
    """Imports go through the packages (ci, ncnn_mp_tools) and the paths the harness sets:
    pytest's pythonpath and ci/testenv.py's PYTHONPATH and MICROPYPATH."""
    stitched = [f"{p.relative_to(REPO)}:{n}" for folder in ("ci", "ncnn_mp_tools", "examples", "tests")
                for p in sorted((REPO / folder).rglob("*.py"))
                for n, line in enumerate(p.read_text().splitlines(), 1)
                if re.search(r"sys\.path\.(insert|append)\(", line)]
    assert not stitched, stitched

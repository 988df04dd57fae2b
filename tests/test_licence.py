# SPDX-License-Identifier: MIT
"""The project's licence: LICENSE is MIT, every source file the project tracks says so on its first
line, and THIRD_PARTY_NOTICES.md names what the firmware and the tools are made of."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from conftest import REPO

SPDX = "SPDX-License-Identifier: MIT"
# What is source: these suffixes and names, and any file opening with a shebang (the shell scripts).
# Not source: patches (applied to others' code), expected outputs (.exp), data and documents.
SOURCE_SUFFIXES = {".c", ".cpp", ".h", ".S", ".py", ".pyi", ".cmake", ".mk", ".ld", ".toml"}
SOURCE_NAMES = {"Makefile"}
ENCODING_LINE = re.compile(r"^[ \t\f]*#.*?coding[:=]")  # (PEP 263)


def is_source(path: Path) -> bool:
    if path.is_symlink() or not path.is_file():
        return False  # (a symlink's target is checked as itself)
    if path.suffix in SOURCE_SUFFIXES or path.name in SOURCE_NAMES:
        return True
    with open(path, "rb") as f:
        return f.read(2) == b"#!"


def tracked_sources() -> list[Path]:
    """The source files git tracks in this checkout."""
    p = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"not a git checkout: {p.stderr.strip()}")
    return [REPO / name for name in p.stdout.split("\0") if name and is_source(REPO / name)]


def spdx_comment(path: Path, text: str) -> str:
    """The SPDX line in the file's own comment syntax (a C file that opens with /* keeps that style)."""
    if path.suffix in (".S", ".ld") or (path.suffix in (".c", ".cpp", ".h") and text.startswith("/*")):
        return f"/* {SPDX} */"
    if path.suffix in (".c", ".cpp", ".h"):
        return f"// {SPDX}"
    return f"# {SPDX}"


def spdx_index(lines: list[str]) -> int:
    """Where the SPDX line goes: first, after a shebang and then a Python encoding line if any."""
    i = 1 if lines and lines[0].startswith("#!") else 0
    return i + 1 if len(lines) > i and ENCODING_LINE.match(lines[i]) else i


def test_licence_is_mit() -> None:
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License\n"), text[:80]
    assert "Copyright (c) 2026 the ncnn_mp authors" in text
    assert "Permission is hereby granted, free of charge," in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text


def test_the_rule_sees_every_kind_of_source() -> None:
    """The rule finds C, C++, assembly, linker scripts, Python, CMake, make and shell files, and
    leaves patches and expected outputs alone."""
    names = {str(p.relative_to(REPO)) for p in tracked_sources()}
    for name in ("ncnn_mp/binding/mat.c", "ncnn_mp/binding/ncnn_mp.h", "ncnn_mp/guard/shape_guard.cpp",
                 "ci/xtensa/port/startup.S", "ci/rv32/virt.ld", "ci/dist.py", "ncnn_mp.pyi", "micropython.cmake", "micropython.mk",
                 "Makefile", "ci/pins.toml", ".ci/run", "ci/esp32core/bin/xtensa-esp32-clang"):
        assert name in names, name
    assert not [n for n in names if n.endswith((".patch", ".exp", ".json", ".md"))]


def test_every_source_file_says_its_licence() -> None:
    missing = []
    for path in tracked_sources():
        text = path.read_text()
        lines = text.splitlines()
        i = spdx_index(lines)
        if len(lines) <= i or lines[i] != spdx_comment(path, text):
            missing.append(f"{path.relative_to(REPO)}: line {i + 1} is not {spdx_comment(path, text)!r}")
    assert not missing, "\n".join(missing)


def pinned_components() -> list[str]:
    """Everything ci/pins.toml fetches: its sources and each pinned Python package."""
    pins = tomllib.loads((REPO / "ci" / "pins.toml").read_text())
    names = ["ncnn", "MicroPython", "picolibc", "libgcc"]
    assert {"ncnn", "micropython", "picolibc_source", "gcc_source"} <= set(pins), "a source pin was renamed"
    for req in pins["python"]["requirements"] + pins["python"]["no_deps"]:
        names.append(req.split("==", 1)[0])
    return names


def test_notices_name_every_component() -> None:
    """Each component, in a table row or heading of THIRD_PARTY_NOTICES.md: a new pin in
    ci/pins.toml without its notice fails here."""
    text = (REPO / "THIRD_PARTY_NOTICES.md").read_text()
    missing = [n for n in pinned_components()
               if not re.search(rf"^(\| `?|#+ ){re.escape(n)}\b", text, re.M | re.I)]
    assert not missing, f"THIRD_PARTY_NOTICES.md does not name {missing}"
    for model in ("SqueezeNet", "NanoDet", "RetinaFace"):
        assert re.search(rf"^\| {model}\b", text, re.M), model

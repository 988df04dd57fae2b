# SPDX-License-Identifier: MIT
"""A firmware the tools run models on, and what it was built with.

The Unix port's runs as a program, a board's under QEMU.

Outside a checkout a target comes from the folder `make dist` writes (its manifest.json says what
each firmware is), by board name, or from a firmware's path inside that folder; a Unix firmware can
also be given by its path alone (it answers what it was built with). In a checkout the build
(ci/) makes them from its profiles.
"""

from __future__ import annotations

import ast
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ncnn_mp_tools.errors import fail
from ncnn_mp_tools.qemu import Board

HOST_ARCH = "x86"  # the Unix firmware's ncnn layer code


@dataclass(frozen=True)
class Target:
    name: str                        # the build profile it was made by: unix, qemu, rv32, ...
    firmware: Path
    board: Board | None              # None: the Unix port, run as a program
    names: bool                      # ncnn with NCNN_STRING: text params, blobs by name
    kernels: bool                    # ncnn_mp's kernels: it runs int8 between layers
    arch: str = HOST_ARCH            # the ncnn layer code it has (ncnn_mp_tools/layers.py)
    layers: frozenset[str] | None = None  # the ncnn layers it keeps; None: every one
    what: str = ""                   # how the reports name it

    @property
    def label(self) -> str:
        return self.what or f"the '{self.name}' firmware"


BUILD_INFO = "import ncnn_mp\nprint(repr(ncnn_mp.build_info()))\n"


def unix_firmware(path: Path, name: str = "unix") -> Target:
    """A Unix firmware by its path: asked what it was built with."""
    if not path.is_file():
        fail(f"no firmware at {path}", "give the path of a Unix firmware (dist's firmware/unix/micropython)")
    try:
        p = subprocess.run([str(path), "-c", BUILD_INFO], capture_output=True, text=True, timeout=60)
    except OSError as e:
        fail(f"{path} does not run here ({e.strerror})", "a board's firmware needs --board or dist's folder")
    lines = p.stdout.strip().splitlines()
    try:
        info = ast.literal_eval(lines[-1]) if p.returncode == 0 and lines else None
    except (ValueError, SyntaxError):
        info = None
    if not isinstance(info, dict) or not {"NCNN_STRING", "NCNN_MP_KERNELS"} <= set(info):
        fail(f"{path} did not answer as a MicroPython with ncnn_mp", f"it printed: {(p.stdout + p.stderr)[-300:]!r}")
    return Target(name, path.resolve(), None, bool(info["NCNN_STRING"]), bool(info["NCNN_MP_KERNELS"]))


def of_manifest(entry: dict[str, Any], firmware: Path) -> Target:
    """A firmware as dist's manifest.json describes it."""
    info = entry["build_info"]
    board = Board.of(entry["board"]) if entry.get("board") else None
    layers = entry.get("ncnn_layers", "all")
    return Target(entry["profile"], firmware.resolve(), board, bool(info["NCNN_STRING"]), bool(info["NCNN_MP_KERNELS"]),
                  entry.get("ncnn_arch", HOST_ARCH), None if layers == "all" else frozenset(layers))


def dist_firmwares(dist: Path) -> dict[str, Target]:
    """Every firmware of the folder `make dist` wrote, by name (unix, unix-kernels, qemu, rv32, ...)."""
    manifest = dist / "manifest.json"
    if not manifest.is_file():
        fail(f"{dist} has no manifest.json", "give the folder `make dist` wrote (dist/ncnn_mp-VERSION)")
    files: dict[str, dict[str, Any]] = json.loads(manifest.read_text())["files"]
    return {e["profile"]: of_manifest(e, dist / path) for path, e in files.items() if e.get("kind") == "firmware"}


def from_dist(dist: Path, name: str) -> Target:
    """Firmware `name` of the folder `make dist` wrote."""
    found = dist_firmwares(dist)
    if name not in found:
        fail(f"{dist} has no '{name}' firmware", f"it has: {', '.join(sorted(found))}")
    return found[name]


def dist_of(firmware: Path) -> Path | None:
    """The folder `make dist` wrote, when the firmware is one of its files (firmware/NAME/FILE)."""
    firmware = firmware.resolve()
    dist = firmware.parent.parent.parent
    return dist if firmware.parent.parent.name == "firmware" and (dist / "manifest.json").is_file() else None


def from_path(firmware: Path, board: str | None = None) -> Target:
    """A firmware by its path: one inside dist's folder (firmware/NAME/...) by its manifest, else a
    Unix firmware (a board's needs dist's manifest: how QEMU runs it)."""
    firmware = firmware.resolve()
    dist = dist_of(firmware)
    if dist is not None:
        target = from_dist(dist, board or firmware.parent.name)
        if target.firmware != firmware:
            fail(f"{firmware} is not dist's '{target.name}' firmware", "leave --board out, or give that board's file")
        return target
    if board not in (None, "unix"):
        fail(f"a '{board}' firmware outside the folder `make dist` wrote", "give --dist FOLDER --board NAME")
    return unix_firmware(firmware)

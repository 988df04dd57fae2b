# SPDX-License-Identifier: MIT
"""Runs a device-side probe script (probes/) on a firmware (target.py), for preflight and compare.

The Unix firmware runs it as a subprocess; a QEMU board runs it with the probe's files packed
into the board's ROMFS (qemu.py, romfs_pack.py).

The script run is `ROOT = ...`, `CONFIG = {...}`, probes/probe_common.py (what every probe
shares: reading a file as a board does, loading a model with its weights in place), then
the probe. ROOT is where `files` are: /rom on a board, a temporary folder on Unix.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ncnn_mp_tools.errors import SetupError, fail
from ncnn_mp_tools.target import Target, dist_firmwares, dist_of, from_dist, from_path

PROBES = Path(__file__).resolve().parent / "probes"


@dataclass(frozen=True)
class Targets:
    """Where a device tool runs: the firmware it answers for (a board's, or the Unix one), and the
    Unix firmware to run on the desktop besides (host(kernels): one with ncnn_mp's kernels when
    kernels is True, for int8 between layers; None when there is none); `own`, when the target is
    a build sized to the models, the firmware as its profile has it (what the reports compare with)."""
    target: Target
    host: Callable[[bool], Target | None]
    own: Target | None = None


def target_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--dist", type=Path, help="the folder `make dist` wrote (dist/ncnn_mp-VERSION)")
    ap.add_argument("--board", default="unix", help="which of its firmwares: unix, qemu, qemu-m4f, rv32, xtensa")
    ap.add_argument("--firmware", type=Path, help="a firmware's path (a Unix one, or one inside dist's folder)")


def targets_of(args: argparse.Namespace) -> Targets:
    """The targets the command line names: dist's folder and a board of it, or a firmware's path."""
    dist = args.dist
    if args.firmware is not None:
        target = from_path(args.firmware, None if args.board == "unix" else args.board)
        dist = dist or dist_of(args.firmware)
    elif dist is not None:
        target = from_dist(dist, args.board)
    else:
        fail("no firmware given", "give --dist FOLDER [--board NAME] (the folder `make dist` wrote) or --firmware PATH")
    # The Unix firmwares to run on the desktop besides: the target itself, else dist's (unix first).
    desktop = [target, *(sorted(dist_firmwares(dist).values(), key=lambda t: t.kernels) if dist is not None else [])]

    def host(kernels: bool) -> Target | None:
        for t in desktop:
            if t.board is None and (t.kernels or not kernels):
                return t
        return None
    return Targets(target, host)


def main(tool: str, run: Callable[[Targets, list[str]], int], argv: list[str]) -> int:
    """A device tool's command line: where it runs (target_arguments), the rest to run(targets,
    rest); a setup failure is one line, "ncnn_mp TOOL: what: what to do", and exit status 2."""
    ap = argparse.ArgumentParser(add_help=False)
    target_arguments(ap)
    args, rest = ap.parse_known_args(argv)
    try:
        return run(targets_of(args), rest)
    except SetupError as e:
        print(f"ncnn_mp {tool}: {e.what}: {e.todo}", file=sys.stderr)
        return 2


def run_probe(target: Target, probe: Path, config: dict[str, Any], files: dict[str, bytes],
              timeout: float, icount: bool = False) -> tuple[str, bool]:
    """The probe's output (stdout then stderr on Unix, the UART then any traceback on a board),
    and whether it ran to its end."""
    def source(root: str) -> str:
        return (f"ROOT = {root!r}\nCONFIG = {config!r}\n" + (PROBES / "probe_common.py").read_text()
                + probe.read_text())

    with tempfile.TemporaryDirectory() as tmp:
        if target.board is not None:
            from ncnn_mp_tools import qemu
            from ncnn_mp_tools.romfs_pack import pack

            image = Path(tmp) / "romfs.img"
            image.write_bytes(pack(files))
            run = qemu.run_script(target.board, target.firmware, source("/rom").encode(), timeout=timeout,
                                  icount=icount, romfs=image)
            return run.output, run.returncode == 0
        for name, data in files.items():
            (Path(tmp) / name).write_bytes(data)
        # (a heap that holds the weights as bytes, as a board holds them in flash)
        p = subprocess.run([str(target.firmware), "-X", "heapsize=512M", "-c", source(tmp)], capture_output=True,
                           text=True, timeout=timeout)
        return p.stdout + p.stderr, p.returncode == 0

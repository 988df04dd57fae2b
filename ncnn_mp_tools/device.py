# SPDX-License-Identifier: MIT
"""Runs a device-side probe script (probes/) on a profile's firmware, for preflight and compare.

The Unix firmware runs it as a subprocess; the profile's QEMU board runs it with the probe's
files packed into the board's ROMFS (ci/qemu.py, ncnn_mp_tools/romfs_pack.py).

The script run is `ROOT = ...`, `CONFIG = {...}`, probes/probe_common.py (what every probe
shares: reading a file as a board does, loading a model with its weights in place), then
the probe. ROOT is where `files` are: /rom on a board, a temporary folder on Unix.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from ci.common import SetupError, is_board as _is_board, profile

PROBES = Path(__file__).resolve().parent / "probes"


def main(tool: str, run: Callable[[str, list[str]], int], argv: list[str]) -> int:
    """A device tool's command line: --profile NAME, the rest to run(profile, rest); a setup
    failure is one line, "ncnn_mp TOOL: what: what to do", and exit status 2."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--profile", default="unix")
    args, rest = ap.parse_known_args(argv)
    try:
        return run(args.profile, rest)
    except SetupError as e:
        print(f"ncnn_mp {tool}: {e.what}: {e.todo}", file=sys.stderr)
        return 2


def is_board(profile_name: str) -> bool:
    return _is_board(profile(profile_name))


def run_probe(profile_name: str, firmware: Path, probe: Path, config: dict[str, Any], files: dict[str, bytes],
              timeout: float, icount: bool = False) -> tuple[str, bool]:
    """The probe's output (stdout then stderr on Unix, the UART then any traceback on a board),
    and whether it ran to its end."""
    def source(root: str) -> str:
        return (f"ROOT = {root!r}\nCONFIG = {config!r}\n" + (PROBES / "probe_common.py").read_text()
                + probe.read_text())

    with tempfile.TemporaryDirectory() as tmp:
        if is_board(profile_name):
            from ci import qemu
            from ncnn_mp_tools.romfs_pack import pack

            image = Path(tmp) / "romfs.img"
            image.write_bytes(pack(files))
            run = qemu.run_script(profile_name, firmware, source("/rom").encode(), timeout=timeout, icount=icount,
                                  romfs=image)
            return run.output, run.returncode == 0
        for name, data in files.items():
            (Path(tmp) / name).write_bytes(data)
        # (a heap that holds the weights as bytes, as a board holds them in flash)
        p = subprocess.run([str(firmware), "-X", "heapsize=512M", "-c", source(tmp)], capture_output=True,
                           text=True, timeout=timeout)
        return p.stdout + p.stderr, p.returncode == 0

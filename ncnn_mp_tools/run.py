# SPDX-License-Identifier: MIT
"""`ncnn-mp run` (`make run`): a MicroPython script on a firmware.

The Unix one runs it as a program, a board's under QEMU with a ROMFS image (or a folder, packed)
in its flash at /rom.

    ncnn-mp run --dist DIST --board qemu [--romfs romfs.img|folder] script.py
    ncnn-mp run --firmware micropython [--heap 16M] script.py [args...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ncnn_mp_tools.device import Targets
from ncnn_mp_tools.device import main as device_main
from ncnn_mp_tools.errors import fail
from ncnn_mp_tools.target import Target


def check(target: Target, argv: list[str], heap: str | None = None, romfs: Path | None = None) -> None:
    """What run() refuses, asked before anything is built (the firmware need not exist yet)."""
    if not argv:
        fail("run needs a script", "ncnn-mp run --dist DIST --board qemu script.py")
    board = target.board
    if board is not None and (len(argv) > 1 or heap):
        fail("a QEMU board's script takes no arguments and has the board's heap",
             "put what it needs in the script (or in the board's ROMFS)")
    if romfs is not None and board is None:
        fail("a ROMFS image is for a QEMU board's flash", "give a board (--board qemu, or rv32, qemu-m4f, xtensa)")
    if romfs is not None and not romfs.exists():
        fail(f"the ROMFS {romfs} does not exist",
             "give an image (ncnn-mp romfs -o romfs.img FILES) or a folder to pack")


def run(target: Target, argv: list[str], heap: str | None = None, romfs: Path | None = None,
        micropypath: str | None = None) -> int:
    """The script's exit status; on a board its output (and traceback) printed as it came."""
    check(target, argv, heap, romfs)
    board = target.board
    if board is None:
        env = dict(os.environ, MICROPYPATH=micropypath) if micropypath else None
        return subprocess.call([str(target.firmware), *(["-X", f"heapsize={heap}"] if heap else []), *argv], env=env)
    from ncnn_mp_tools import qemu
    from ncnn_mp_tools.romfs_pack import pack

    with tempfile.TemporaryDirectory() as tmp:
        image = romfs
        if image is not None and image.is_dir():  # a folder: packed as it is, its subfolders too
            files = {p.relative_to(image).as_posix(): p.read_bytes() for p in sorted(image.rglob("*")) if p.is_file()}
            if not files:
                fail(f"the ROMFS folder {romfs} holds no files", "put the model's files there")
            image = Path(tmp) / "romfs.img"
            image.write_bytes(pack(files))
        r = qemu.run_script(board, target.firmware, Path(argv[0]).read_bytes(), romfs=image)
    sys.stdout.write(r.output)
    return r.returncode


def main(targets: Targets, argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="ncnn-mp run")
    ap.add_argument("--heap", help="the Unix firmware's MicroPython heap, e.g. 16M")
    ap.add_argument("--romfs", type=Path, help="a board's flash: a ROMFS image, or a folder to pack (at /rom)")
    args, rest = ap.parse_known_args(argv)
    return run(targets.target, rest, args.heap, args.romfs)


if __name__ == "__main__":
    sys.exit(device_main("run", main, sys.argv[1:]))

# SPDX-License-Identifier: MIT
"""Running a MicroPython script on a profile's QEMU board: ncnn_mp_tools/qemu.py's runner.

The board is taken from ci/profiles.toml (qemu_system, qemu_args, romfs_address, qemu_console, qemu_icount)."""

from __future__ import annotations

from pathlib import Path

from ci.common import fail, profile
from ncnn_mp_tools import qemu as _qemu
from ncnn_mp_tools.qemu import NOT_RUN, RAW_PROMPT, SOFT_REBOOT, Board, Run  # noqa: F401 (the harness's names)


def board(profile_name: str) -> Board:
    prof = profile(profile_name)
    if "qemu_system" not in prof:
        fail(f"profile '{profile_name}' is not a QEMU board", "give one with qemu_system, e.g. qemu or rv32")
    return Board.of(prof)


def qemu_command(profile_name: str, firmware: Path, timeout: float, icount: bool = False,
                 romfs: Path | None = None) -> list[str]:
    return _qemu.qemu_command(board(profile_name), firmware, timeout, icount, romfs)


def run_script(profile_name: str, firmware: Path, source: bytes, timeout: float = 120, icount: bool = False,
               romfs: Path | None = None) -> Run:
    return _qemu.run_script(board(profile_name), firmware, source, timeout, icount, romfs)


def run_scripts(profile_name: str, firmware: Path, sources: list[bytes], timeout: float = 120,
                icount: bool = False, romfs: Path | None = None) -> list[Run]:
    return _qemu.run_scripts(board(profile_name), firmware, sources, timeout, icount, romfs)

"""Running a MicroPython script on the QEMU (bare-metal Cortex-M) firmware.

The script goes through the firmware's raw REPL on the emulated UART, with MicroPython's
own tools/pyboard.py, as it would to a board on a serial port. QEMU runs under `timeout`:
a HardFault spins forever instead of exiting.
"""

from __future__ import annotations

import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from sources import micropython_source

MACHINE = "mps2-an385"


@dataclass
class Run:
    returncode: int  # 0: the script ran to its end; 1: it raised; 124: QEMU hit the time limit
    output: str
    seconds: float


def qemu_command(firmware: Path, timeout: float, icount: bool = False) -> list[str]:
    """QEMU for this board; with icount, virtual time counts executed instructions
    (-icount shift=0: one instruction per nanosecond), so the board's timer measures them."""
    cmd = ["timeout", "-k", "5", str(int(timeout)), "qemu-system-arm", "-machine", MACHINE,
           "-nographic", "-monitor", "null", "-semihosting", "-serial", "stdio", "-kernel", str(firmware)]
    return cmd + (["-icount", "shift=0"] if icount else [])


def run_script(firmware: Path, source: bytes, timeout: float = 120, icount: bool = False) -> Run:
    sys.path.insert(0, str(micropython_source() / "tools"))
    import pyboard  # MicroPython's own, from the pinned source

    start = time.monotonic()
    board = pyboard.Pyboard("exec:" + shlex.join(qemu_command(firmware, timeout, icount)))
    try:
        board.enter_raw_repl()
        out, err = board.exec_raw(source, timeout=timeout)
        rc = 1 if err else 0
        text = (out + err).decode(errors="replace").replace("\r\n", "\n")
    except pyboard.PyboardError as e:
        rc, text = 124, f"no answer from the QEMU firmware (crashed, or over {timeout:.0f} s): {e}"
    finally:
        board.close()
    return Run(rc, text, time.monotonic() - start)


def main(argv: list[str]) -> int:
    """ci/tool.py run --profile qemu SCRIPT: run SCRIPT on the firmware, print its output."""
    from firmware import build_firmware

    profile, script = argv
    r = run_script(build_firmware(profile), Path(script).read_bytes())
    sys.stdout.write(r.output)
    return r.returncode

# SPDX-License-Identifier: MIT
"""Running a MicroPython script on a QEMU (bare-metal) firmware: one of ncnn_mp's boards.

The Cortex-M3 board, the Cortex-M4F, the RISC-V one, the Xtensa ones; a Board says which
emulator, machine and flash address (what ci/profiles.toml gives a profile, and what `make
dist`'s manifest.json gives each board firmware).

The script goes in through the firmware's raw REPL on the emulated UART, as a host tool
talks to a board on a serial port: Ctrl-A enters raw mode, the script ends with Ctrl-D,
and the board answers "OK", the output, Ctrl-D, the traceback if any, Ctrl-D. QEMU runs
under `timeout` and every wait has a deadline: a HardFault spins forever on the Cortex-M
board (the RISC-V board's exception handler names the fault and leaves QEMU), and a
firmware that stops answering must end the run, not hang it.

`run_scripts` runs several scripts in one QEMU run with a soft reboot between each, as a
board with a serial console is used (Ctrl-D at the raw prompt): the reboot sweeps the
whole Python heap and re-initialises the VM but not the heap or C state, which is how
state that outlives a reboot (a root pointer, a C static) shows up on a real board.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path



@dataclass(frozen=True)
class Board:
    """How QEMU runs a board's firmware."""
    system: str                      # the emulator: qemu-system-arm, ...
    args: tuple[str, ...]            # its machine and CPU
    romfs_address: int               # where the board's flash holds a ROMFS image (mounted at /rom)
    console: tuple[str, ...] = ("-serial", "stdio")
    icount: bool = True              # -icount counts instructions (False: the board's own timer does)

    @classmethod
    def of(cls, settings: dict[str, object]) -> Board:
        """From a profile's settings or a manifest's entry (qemu_system, qemu_args, romfs_address,
        qemu_console, qemu_icount)."""
        console = settings.get("qemu_console", ["-serial", "stdio"])
        args, address = settings["qemu_args"], settings["romfs_address"]
        assert isinstance(args, list) and isinstance(console, list) and isinstance(address, int)
        return cls(str(settings["qemu_system"]), tuple(map(str, args)), address, tuple(map(str, console)),
                   bool(settings.get("qemu_icount", True)))


@dataclass
class Run:
    returncode: int  # 0: ran to its end; 1: raised; 124: no complete answer in time; 125: not run
    output: str  # what the script printed, then its traceback if it raised
    seconds: float


RAW_PROMPT = b"raw REPL; CTRL-B to exit\r\n>"
# What the board prints for Ctrl-D at the raw prompt (ports/qemu/main.c, shared/runtime/
# pyexec.c): the empty command's "OK", the reboot line (written with "\n", which the
# console's cooked output turns into "\r\n"), then the raw REPL's banner and prompt again.
SOFT_REBOOT = b"OK\r\nMPY: soft reboot\r\n" + RAW_PROMPT
NOT_RUN = 125  # an earlier script or the soft reboot before this one went wrong


def qemu_command(board: Board, firmware: Path, timeout: float, icount: bool = False,
                 romfs: Path | None = None) -> list[str]:
    """QEMU for the board, with a ROMFS image in the board's flash for models (which
    ci/mcu/board.c mounts at /rom): `romfs`, else the firmware's romfs.img (ci/firmware.py)
    when there is one; with icount, virtual time counts executed instructions (-icount
    shift=0: one instruction per nanosecond), so the board's timer measures them; a board whose
    timer counts instructions itself (icount False: the Xtensa board's ICOUNT register) runs
    without it, which is 1.2 times faster there."""
    cmd = ["timeout", "-k", "5", str(int(timeout) + 5), board.system, *board.args,
           "-nographic", "-monitor", "null", "-semihosting", *board.console, "-kernel", str(firmware)]
    romfs = romfs or firmware.with_name("romfs.img")
    if romfs.exists():
        cmd += ["-device", f"loader,file={romfs},addr={board.romfs_address:#x},force-raw=on"]
    return cmd + (["-icount", "shift=0"] if icount and board.icount else [])


@dataclass
class _Console:
    """QEMU's UART: bytes read by a thread, waited on with deadlines."""
    proc: subprocess.Popen[bytes]
    data: bytearray = field(default_factory=bytearray)
    lock: threading.Condition = field(default_factory=threading.Condition)
    closed: bool = False

    def start(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        while chunk := self.proc.stdout.read1(4096):  # type: ignore[attr-defined]
            with self.lock:
                self.data += chunk
                self.lock.notify_all()
        with self.lock:
            self.closed = True
            self.lock.notify_all()

    def wait_for(self, marker: bytes, start: int, deadline: float) -> int:
        """The index just past `marker` at or after `start`, or -1 at the deadline or EOF."""
        with self.lock:
            while True:
                i = self.data.find(marker, start)
                if i >= 0:
                    return i + len(marker)
                left = deadline - time.monotonic()
                if self.closed or left <= 0:
                    return -1
                self.lock.wait(left)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()


def run_script(board: Board, firmware: Path, source: bytes, timeout: float = 120, icount: bool = False,
               romfs: Path | None = None) -> Run:
    return run_scripts(board, firmware, [source], timeout, icount, romfs)[0]


def run_scripts(board: Board, firmware: Path, sources: list[bytes], timeout: float = 120,
                icount: bool = False, romfs: Path | None = None) -> list[Run]:
    """Run each script in turn in one QEMU run, soft-rebooting the board between two; one
    Run per script. `timeout` is for the whole run. A script that does not answer in time
    gets 124, and every script after it, or after a soft reboot that did not print exactly
    SOFT_REBOOT, gets NOT_RUN with what the console showed."""
    start = time.monotonic()
    deadline = start + timeout
    # A session of its own: ending the run kills QEMU too, not just `timeout` around it.
    proc = subprocess.Popen(qemu_command(board, firmware, timeout, icount, romfs), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    console = _Console(proc)
    console.start()
    runs: list[Run] = []
    try:
        console.send(b"\r\x03\x03\x01")  # interrupt whatever runs, enter the raw REPL
        at = console.wait_for(RAW_PROMPT, 0, deadline)
        if at < 0:
            runs.append(_failed(console, start, deadline, "the firmware did not start its raw REPL"))
        for i, source in enumerate(sources):
            if at < 0:  # the board is gone or lost: the rest are not run
                break
            if i > 0:
                at, problem = _soft_reboot(console, at, deadline)
                if at < 0:
                    runs.append(_failed(console, time.monotonic(), deadline,
                                        f"not run: the soft reboot after script {i} {problem}", NOT_RUN))
                    break
            run, at = _run_one(console, source, at, deadline)
            runs.append(run)
        while len(runs) < len(sources):
            runs.append(Run(NOT_RUN, "not run: an earlier script or soft reboot went wrong", 0.0))
        return runs
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _run_one(console: _Console, source: bytes, at: int, deadline: float) -> tuple[Run, int]:
    """One script at the raw prompt (console position `at`): its Run, and the position just
    past the prompt the board prints after it (-1 when it did not answer completely)."""
    start = time.monotonic()
    console.send(source + b"\x04")
    at = console.wait_for(b"OK", at, deadline)
    out_end = console.wait_for(b"\x04", at, deadline) if at >= 0 else -1
    err_end = console.wait_for(b"\x04", out_end, deadline) if out_end >= 0 else -1
    prompt = console.wait_for(b">", err_end, deadline) if err_end >= 0 else -1
    if prompt < 0:
        return _failed(console, start, deadline, "the script did not finish"), -1
    out = bytes(console.data[at:out_end - 1])
    err = bytes(console.data[out_end:err_end - 1])
    text = (out + err).decode(errors="replace").replace("\r\n", "\n")
    return Run(1 if err else 0, text, time.monotonic() - start), prompt


def _soft_reboot(console: _Console, at: int, deadline: float) -> tuple[int, str]:
    """Ctrl-D at the raw prompt. The position past the prompt once the board printed exactly
    SOFT_REBOOT; else -1 and what went wrong (text printed by the reboot's sweep, such as a
    finaliser's error, or no prompt in time: a HardFault during the sweep)."""
    console.send(b"\x04")
    end = console.wait_for(RAW_PROMPT, at, deadline)
    if end < 0:
        return -1, "did not bring back the raw REPL"
    seen = bytes(console.data[at:end])
    if seen != SOFT_REBOOT:
        return -1, f"printed {seen!r}, not {SOFT_REBOOT!r}"
    return end, ""


def _failed(console: _Console, start: float, deadline: float, what: str, code: int = 124) -> Run:
    with console.lock:
        seen = bytes(console.data[-2000:]).decode(errors="replace")
    state = ("QEMU exited" if console.closed else "no answer in time (a Cortex-M HardFault spins silently)"
             if time.monotonic() >= deadline else "the board is still running")
    return Run(code, f"{what}: {state}; the console's last output:\n{seen}", time.monotonic() - start)

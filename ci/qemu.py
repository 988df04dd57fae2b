"""Running a MicroPython script on the QEMU (bare-metal Cortex-M) firmware.

The script goes in through the firmware's raw REPL on the emulated UART, as a host tool
talks to a board on a serial port: Ctrl-A enters raw mode, the script ends with Ctrl-D,
and the board answers "OK", the output, Ctrl-D, the traceback if any, Ctrl-D. QEMU runs
under `timeout` and every wait has a deadline: a HardFault spins forever, and a firmware
that stops answering must end the run, not hang it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

MACHINE = "mps2-an385"


@dataclass
class Run:
    returncode: int  # 0: the script ran to its end; 1: it raised; 124: no complete answer in time
    output: str  # what the script printed, then its traceback if it raised
    seconds: float


def qemu_command(firmware: Path, timeout: float, icount: bool = False) -> list[str]:
    """QEMU for this board; with icount, virtual time counts executed instructions
    (-icount shift=0: one instruction per nanosecond), so the board's timer measures them."""
    cmd = ["timeout", "-k", "5", str(int(timeout) + 5), "qemu-system-arm", "-machine", MACHINE,
           "-nographic", "-monitor", "null", "-semihosting", "-serial", "stdio", "-kernel", str(firmware)]
    return cmd + (["-icount", "shift=0"] if icount else [])


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


def run_script(firmware: Path, source: bytes, timeout: float = 120, icount: bool = False) -> Run:
    start = time.monotonic()
    deadline = start + timeout
    # A session of its own: ending the run kills QEMU too, not just `timeout` around it.
    proc = subprocess.Popen(qemu_command(firmware, timeout, icount), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    console = _Console(proc)
    console.start()
    try:
        console.send(b"\r\x03\x03\x01")  # interrupt whatever runs, enter the raw REPL
        at = console.wait_for(b"raw REPL; CTRL-B to exit\r\n>", 0, deadline)
        if at < 0:
            return _failed(console, start, "the firmware did not start its raw REPL")
        console.send(source + b"\x04")
        at = console.wait_for(b"OK", at, deadline)
        out_end = console.wait_for(b"\x04", at, deadline) if at >= 0 else -1
        err_end = console.wait_for(b"\x04", out_end, deadline) if out_end >= 0 else -1
        if err_end < 0:
            return _failed(console, start, "the script did not finish")
        out = bytes(console.data[at:out_end - 1])
        err = bytes(console.data[out_end:err_end - 1])
        text = (out + err).decode(errors="replace").replace("\r\n", "\n")
        return Run(1 if err else 0, text, time.monotonic() - start)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _failed(console: _Console, start: float, what: str) -> Run:
    with console.lock:
        seen = bytes(console.data[-2000:]).decode(errors="replace")
    state = "QEMU exited" if console.closed else "no answer in time (a HardFault spins silently)"
    return Run(124, f"{what}: {state}; the console's last output:\n{seen}", time.monotonic() - start)

# SPDX-License-Identifier: MIT
"""mpremote's Transport on the Unix firmware, so that `mpremote mip install` (its do_mip, run in
this process) writes a package through the firmware's own file system calls.

mpremote drives a board through a Transport: its fs_* methods (mkdir, stat, writefile, hashfile,
...) are MicroPython code sent to the board with exec() and eval(), which a serial board runs in
its raw REPL. The Unix firmware has no raw REPL on a pipe, so FirmwareTransport starts it with a
small loop of ours (DEVICE_LOOP) that reads code blocks from stdin and answers as the raw REPL
does: the block's output, 0x04, the exception's traceback (empty on success), 0x04. exec_raw,
exec and eval then behave as mpremote's SerialTransport's: exec returns the output and raises
TransportExecError with the traceback when the code raised, which mpremote's fs_* turn into
OSError (ENOENT, ENOTDIR, ...) as for a board.
"""

from __future__ import annotations

import ast
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

from mpremote.transport import Transport, TransportError, TransportExecError

# Runs on the firmware (-c). Each block is "<length>\n" then that many bytes of UTF-8 code, run
# in one globals dict kept between blocks, as the raw REPL keeps its globals between commands
# (mpremote relies on it: fs_writefile opens `f` in one exec and writes through `w` in the
# next). A soft reset is a block that clears them.
DEVICE_LOOP = """
import sys
def loop():
    i = sys.stdin.buffer
    o = sys.stdout
    g = {"__name__": "__main__"}
    while True:
        n = i.readline()
        if not n:
            return
        n = int(n)
        b = b""
        while len(b) < n:
            b += i.read(n - len(b))
        try:
            exec(b.decode(), g)
            o.write("\\x04\\x04")
        except BaseException as e:
            o.write("\\x04")
            sys.print_exception(e, o)
            o.write("\\x04")
loop()
"""


class FirmwareTransport(Transport):  # type: ignore[misc]
    """mpremote's Transport over a Unix firmware process running DEVICE_LOOP."""

    def __init__(self, binary: Path, env: dict[str, str], cwd: Path, timeout: float = 30) -> None:
        self.timeout = timeout
        self.in_raw_repl = False
        self.proc = subprocess.Popen([str(binary), "-c", DEVICE_LOOP], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
        self._pending = b""

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()

    def __enter__(self) -> FirmwareTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # What mpremote's State asks before a command (mpremote.main.State.ensure_raw_repl).
    def enter_raw_repl(self, soft_reset: bool = True, timeout_overall: float = 10) -> None:
        if soft_reset:
            self.exec("globals().clear()")
        self.in_raw_repl = True

    def exit_raw_repl(self) -> None:
        self.in_raw_repl = False

    def _read_until_eof_marker(self, deadline: float) -> bytes:
        """The firmware's output up to (without) the next 0x04; TransportError when the
        firmware exits or says nothing more before `deadline`."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\x04" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TransportError(f"timeout waiting for the firmware's answer; it printed {self._pending[-300:]!r}")
            chunk = os.read(fd, 65536)
            if not chunk:
                assert self.proc.stderr is not None
                raise TransportError(f"the firmware exited ({self.proc.wait()}): "
                                     f"{(self._pending + self.proc.stderr.read())[-500:]!r}")
            self._pending += chunk
        data, _, self._pending = self._pending.partition(b"\x04")
        return data

    def exec_raw(self, command: str | bytes, timeout: float = 10,
                 data_consumer: Callable[[bytes], None] | None = None) -> tuple[bytes, bytes]:
        """Run `command` on the firmware: (its output, the exception's traceback or b"")."""
        code = command if isinstance(command, bytes) else command.encode()
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(b"%d\n" % len(code) + code)
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise TransportError(f"the firmware exited ({self.proc.wait()})") from None
        deadline = time.monotonic() + max(timeout, self.timeout)
        data = self._read_until_eof_marker(deadline)
        if data_consumer:
            data_consumer(data)
        return data, self._read_until_eof_marker(deadline)

    def exec(self, command: str | bytes, data_consumer: Callable[[bytes], None] | None = None) -> bytes:
        ret, ret_err = self.exec_raw(command, data_consumer=data_consumer)
        if ret_err:
            raise TransportExecError(ret, ret_err.decode())
        return ret

    def eval(self, expression: str, parse: bool = True) -> Any:
        if parse:
            return ast.literal_eval(self.exec(f"print(repr({expression}))").strip().decode())
        return self.exec(f"print({expression})").strip()

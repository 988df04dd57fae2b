# SPDX-License-Identifier: MIT
"""The Unix port's interactive REPL is a user path: drive it through a pseudo-terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time

from conftest import MicroPython


def read_until(fd: int, marker: bytes, timeout: float = 20) -> bytes:
    out = b""
    deadline = time.monotonic() + timeout
    while marker not in out:
        left = deadline - time.monotonic()
        assert left > 0, f"REPL did not print {marker!r}; got:\n{out.decode(errors='replace')}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    return out


def test_repl_imports_and_runs_ncnn_mp(micropython: MicroPython) -> None:
    import ncnn  # the CPython wheel of the same ncnn release: the version to expect

    controller, terminal = pty.openpty()
    proc = subprocess.Popen([str(micropython.binary)], stdin=terminal, stdout=terminal, stderr=terminal,
                            close_fds=True, env=micropython.env)
    os.close(terminal)
    try:
        read_until(controller, b">>> ")
        os.write(controller, b"import ncnn_mp\r")
        read_until(controller, b">>> ")
        os.write(controller, b"ncnn_mp.version()\r")
        out = read_until(controller, b">>> ")
        assert repr(ncnn.__version__).encode() in out, out
        os.write(controller, b"m = ncnn_mp.Mat(3, 2); m.fill(0.5); m\r")
        out = read_until(controller, b">>> ")
        assert b"<Mat dims=2 w=3 h=2 d=1 c=1 elemsize=4 elempack=1" in out, out
        os.write(controller, b"ncnn_mp.Mat(-1)\r")
        out = read_until(controller, b">>> ")
        assert b"ValueError: Mat(): w out of range" in out, out
        os.write(controller, b"\x04")  # Ctrl-D ends the REPL
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(controller)

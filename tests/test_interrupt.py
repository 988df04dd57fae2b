# SPDX-License-Identifier: MIT
"""Ctrl-C while ncnn runs (a Python layer looping, or a big net of ncnn's own layers):
KeyboardInterrupt at the caller, and the same Net extracts correctly afterwards.

The Unix port raises KeyboardInterrupt straight from its SIGINT handler; ncnn_mp replaces
that handler by one that schedules it (ncnn_mp/binding/interrupt.c). Before, test_ctrl_c_in_a_big_net
crashed (segmentation fault) in 2 of 3 runs, and once in 40 runs hung in its last round when
only ncnn's extracts were guarded."""

from __future__ import annotations

import os
import pty
import random
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import MicroPython

SPIN = """
import ncnn_mp

class Spin(ncnn_mp.Layer):
    spinning = True
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
    def forward_inplace(self, blob, opt):
        print("spinning")
        while Spin.spinning:
            pass
        blob[0] += 1

net = ncnn_mp.Net()
net.register_custom_layer("Spin", Spin)
net.load_param_mem("7767517\\n2 2\\nInput data 0 1 data 0=1\\nSpin s 1 1 data out\\n")
net.load_model(b"")
x = ncnn_mp.Mat(1)
x.fill(1)
try:
    ex = net.create_extractor()
    ex.input("data", x)
    ex.extract("out")
    print("not interrupted")
except KeyboardInterrupt:
    print("KeyboardInterrupt from extract")
Spin.spinning = False
ex = net.create_extractor()
ex.input("data", x)
print("afterwards", ex.extract("out")[0])
"""

# A stack of 3x3 convolutions, 32 channels on SIZE x SIZE (weights 1/288: values stay
# near 1; or zeros, for nets whose weights would not fit the heap), all ncnn's own code,
# multi-threaded where ncnn was built with OpenMP.
BIG_NET = """
import sys
from array import array
import ncnn_mp

LAYERS, SIZE, ROUNDS = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
lines = ["Input data 0 1 data 0=%d 1=%d 2=32" % (SIZE, SIZE)]
for i in range(LAYERS):
    lines.append("Convolution c%d 1 1 %s b%d 0=32 1=3 4=1 5=1 6=9216" % (i, "b%d" % (i - 1) if i else "data", i))
param = "7767517\\n%d %d\\n%s\\n" % (len(lines), len(lines), "\\n".join(lines))
net = ncnn_mp.Net()
net.load_param_mem(param)
if sys.argv[4:] == ["zeros"]:
    with ncnn_mp.DataReader(zeros=True) as dr:
        net.load_model(dr)
else:
    one = bytes(4) + bytes(array("f", [1 / 288] * 9216)) + bytes(array("f", [0.01] * 32))
    net.load_model(one * LAYERS)
    one = None
x = ncnn_mp.Mat(SIZE, SIZE, 32)
x.fill(1.0)

def run():
    ex = net.create_extractor()
    ex.input("data", x)
    y = ex.extract("b%d" % (LAYERS - 1))
    n = y.w * y.h * y.c
    return [y[i] for i in range(0, n, n // 1000 + 1)]  # all of it would not fit the heap

expected = run()
for k in range(ROUNDS):
    print("extracting", k)
    try:
        while True:
            run()
    except KeyboardInterrupt as e:
        print("KeyboardInterrupt", k)
    print("same result after", k, run() == expected)
print("done")
"""


class Terminal:
    """The firmware running a script on a pseudo-terminal, as at a shell (Ctrl-C: SIGINT)."""

    def __init__(self, proc: subprocess.Popen[bytes], controller: int) -> None:
        self.proc, self.controller = proc, controller
        self.seen = b""  # everything read so far
        self.at = 0  # where the next expect() starts looking

    def expect(self, marker: bytes, timeout: float = 20) -> bytes:
        """What the script printed up to and including `marker` (AssertionError after `timeout`)."""
        deadline = time.monotonic() + timeout
        while marker not in self.seen[self.at:]:
            left = deadline - time.monotonic()
            assert left > 0, f"no {marker!r} within {timeout} s; the script printed:\n{self.seen.decode(errors='replace')}"
            ready, _, _ = select.select([self.controller], [], [], left)
            try:
                chunk = os.read(self.controller, 4096) if ready else b""
            except OSError:  # the script ended
                chunk = b""
            assert chunk or not ready, f"the script ended before {marker!r}:\n{self.seen.decode(errors='replace')}"
            self.seen += chunk
        end = self.seen.index(marker, self.at) + len(marker)
        part, self.at = self.seen[self.at:end], end
        return part

    def interrupt(self) -> None:
        self.proc.send_signal(signal.SIGINT)


@contextmanager
def on_terminal(micropython: MicroPython, script: Path, *args: str) -> Iterator[Terminal]:
    controller, terminal = pty.openpty()
    proc = subprocess.Popen([str(micropython.binary), str(script), *args], stdin=terminal, stdout=terminal,
                            stderr=terminal, close_fds=True, env=micropython.env)
    os.close(terminal)
    try:
        yield Terminal(proc, controller)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(controller)


def test_ctrl_c_in_a_python_layer(micropython: MicroPython, tmp_path: Path) -> None:
    script = tmp_path / "spin.py"
    script.write_text(SPIN)
    with on_terminal(micropython, script) as term:
        term.expect(b"spinning")
        time.sleep(0.2)  # well inside the loop
        term.interrupt()
        out = term.expect(b"afterwards") + term.expect(b"\n")
        assert b"KeyboardInterrupt from extract" in out, out
        assert b"afterwards 2.0" in out, out
        assert term.proc.wait(timeout=20) == 0


READER_SPIN = """
import ncnn_mp

class Slow(ncnn_mp.DataReader):
    spinning = True
    def __init__(self, data):
        super().__init__()
        self.data, self.pos = data, 0
    def read(self, n):
        if self.pos == 0:
            print("reading")
            while Slow.spinning:
                pass
        self.pos += n
        return self.data[self.pos - n:self.pos]

param = b"7767517\\n2 2\\nInput data 0 1 data 0=2\\nScale s 1 1 data out 0=2\\n"
weights = bytes(8)  # Scale's two weights, raw floats: 0.0, 0.0
net = ncnn_mp.Net()
net.load_param(param)
try:
    net.load_model(Slow(weights))
    print("not interrupted")
except KeyboardInterrupt:
    print("KeyboardInterrupt from load_model")
Slow.spinning = False
net.load_model(Slow(b"\\x00\\x00\\x80\\x3f\\x00\\x00\\x00\\x40"))  # 1.0, 2.0
x = ncnn_mp.Mat(2)
x.fill(3)
ex = net.create_extractor()
ex.input("data", x)
print("afterwards", list(memoryview(ex.extract("out"))))
"""


def test_ctrl_c_in_a_python_reader(micropython: MicroPython, tmp_path: Path) -> None:
    """Ctrl-C while ncnn reads weights through a Python DataReader's read(): KeyboardInterrupt
    from load_model, and the same Net loads and runs after."""
    script = tmp_path / "reader.py"
    script.write_text(READER_SPIN)
    with on_terminal(micropython, script) as term:
        term.expect(b"reading")
        time.sleep(0.2)
        term.interrupt()
        out = term.expect(b"afterwards") + term.expect(b"\n")
        assert b"KeyboardInterrupt from load_model" in out, out
        assert b"afterwards [3.0, 6.0]" in out, out
        assert term.proc.wait(timeout=20) == 0


def test_ctrl_c_in_a_big_net(micropython: MicroPython, tmp_path: Path) -> None:
    """Ctrl-C at random moments of back-to-back extracts of ncnn's own layers, ten times
    in one process: each a KeyboardInterrupt, and the Net's result stays the same."""
    script = tmp_path / "big.py"
    script.write_text(BIG_NET)
    rounds = 10
    rng = random.Random(7)
    with on_terminal(micropython, script, "4", "96", str(rounds)) as term:
        for k in range(rounds):
            term.expect(b"extracting %d" % k, timeout=120)
            time.sleep(rng.uniform(0.05, 0.5))
            term.interrupt()
            term.expect(b"same result after %d" % k, timeout=120)
        term.expect(b"done", timeout=120)
        assert term.proc.wait(timeout=30) == 0, term.seen
    text = term.seen.decode(errors="replace")
    for k in range(rounds):
        assert f"KeyboardInterrupt {k}" in text, text
        assert f"same result after {k} True" in text, text
    assert "Traceback" not in text, text


def test_second_ctrl_c_ends_a_long_extract(micropython: MicroPython, tmp_path: Path) -> None:
    """While ncnn runs, the first Ctrl-C waits for it; a second one before the first could
    be raised ends the process as SIGINT ends a program (the way out of a net that takes
    too long)."""
    script = tmp_path / "big.py"
    script.write_text(BIG_NET)
    # 32 layers on 512 x 512: about 3 s an extract (0.1 s a layer) on the machine that made this.
    with on_terminal(micropython, script, "32", "512", "1", "zeros") as term:
        term.expect(b"extracting 0", timeout=600)  # the first (checked) extract is done
        time.sleep(0.2)
        term.interrupt()
        time.sleep(0.1)
        term.interrupt()
        term.expect(b"a second Ctrl-C before the first could be raised: exiting", timeout=30)
        assert term.proc.wait(timeout=30) == -signal.SIGINT, term.seen

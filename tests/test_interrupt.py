"""Ctrl-C while ncnn runs a Python layer: KeyboardInterrupt at the caller, and the Net works after."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import time
from pathlib import Path

from conftest import MicroPython
from test_repl import read_until

SCRIPT = """
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


def test_ctrl_c_during_extract(micropython: MicroPython, tmp_path: Path) -> None:
    script = tmp_path / "spin.py"
    script.write_text(SCRIPT)
    controller, terminal = pty.openpty()
    proc = subprocess.Popen([str(micropython.binary), str(script)], stdin=terminal, stdout=terminal,
                            stderr=terminal, close_fds=True, env=micropython.env)
    os.close(terminal)
    try:
        read_until(controller, b"spinning")
        time.sleep(0.2)  # well inside the loop
        proc.send_signal(signal.SIGINT)  # what Ctrl-C at a terminal does
        out = read_until(controller, b"afterwards")
        out += read_until(controller, b"\n")
        assert b"KeyboardInterrupt from extract" in out, out
        assert b"afterwards 2.0" in out, out
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(controller)

# SPDX-License-Identifier: MIT
"""The Cortex-M3 firmware as a board short of flash builds it (profile qemu-small): MicroPython's
terse errors, and every optional part of ncnn_mp left out (ncnn_mp/binding/config.h). Each message then
names only the call ("Net.load_param"), each left-out part raises NotImplementedError or is
absent, and a model still runs (make mcu-text measures what it saves)."""

from __future__ import annotations

import pytest

from conftest import QemuBoard, Result

pytestmark = pytest.mark.mcu

SCRIPT = """
import ncnn_mp
from mptest import DIGITS, DIGITS_MODEL, Standardize, check, read

info = ncnn_mp.build_info()
print([k for k in sorted(info) if k.startswith("NCNN_MP_HAS_") and info[k]])
print(hasattr(ncnn_mp.Mat, "from_pixels"), hasattr(ncnn_mp.Mat, "draw_text"), hasattr(ncnn_mp.Net, "layers"))

class Reader(ncnn_mp.DataReader):
    def read(self, n):
        return b""

closed = ncnn_mp.Net()
closed.close()
check("counting", lambda: ncnn_mp.Allocator(counting=True))
check("python reader", Reader)
check("arguments", lambda: ncnn_mp.Net().load_param())
check("closed", lambda: closed.load_param(b"7767517"))
check("index", lambda: ncnn_mp.Mat(4)[9])

net = ncnn_mp.Net()
net.register_custom_layer(ncnn_mp.CUSTOM_BIT | 0, Standardize)
net.load_param_bin(read(DIGITS + "/digits.param.bin"))
net.load_model(read(DIGITS_MODEL))
images = read(DIGITS + "/digits_test.bin")
m = ncnn_mp.Mat(8, 8, 1)
for j in range(64):
    m[j] = images[j]
ex = net.create_extractor()
ex.input(0, m)
out = ex.extract(5)
print("digits", out.w, round(sum(memoryview(out)), 3))
"""

EXPECTED = [
    "[]",
    "False False False",
    "counting -> NotImplementedError: Allocator()",
    "python reader -> NotImplementedError: DataReader()",
    "arguments -> TypeError: Net.load_param",
    "closed -> ValueError: Net.load_param",
    "index -> IndexError: Mat.__getitem__",
    "digits 10 1.0",
]


def test_small_board_terse_and_without_optional_parts(tmp_path) -> None:
    script = tmp_path / "small.py"
    script.write_text(SCRIPT)
    r: Result = QemuBoard("qemu-small").run(script)
    assert r.returncode == 0, r.explain()
    assert r.stdout.splitlines() == EXPECTED, r.explain()

# SPDX-License-Identifier: MIT
"""The esp32core board (the ESP32's windowed Xtensa core with its FPU, under QEMU): each of the
build's workarounds for clang 22 checked on the board, where it goes wrong without it
(ci/esp32core/port/compiler_checks.c says which function guards which), and the windowed
runtime (register windows spilled for the garbage collector, nlr across windows)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from conftest import QemuBoard

pytestmark = pytest.mark.mcu


@pytest.fixture(scope="module")
def board() -> QemuBoard:
    return QemuBoard("esp32core")


def run(board: QemuBoard, tmp_path: Path, source: str) -> list[str]:
    script = tmp_path / "script.py"
    script.write_text(source)
    r = board.run(script, timeout=120)
    assert r.returncode == 0, r.explain()
    return r.stdout.splitlines()


def bits(x: float) -> int:
    """A double's 64 bits (compiler_checks returns doubles so)."""
    return int(struct.unpack("<Q", struct.pack("<d", x))[0])


def f32(x: float) -> float:
    """x as the board's Python holds it (single precision)."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


def test_varargs_through_registers_and_stack(board: QemuBoard, tmp_path: Path) -> None:
    """The board's stdarg.h: without it clang 22's va_arg reads one word past every named argument
    and adds the 32-byte gap again for every stack argument (garbage from the first %d on)."""
    cases = [(-42, 3.14159, -1234567890123, "abc", 122, 1e-5), (7, -0.5, 2**40 + 3, "", 65, 123456789.0)]
    ten = [3, -1, 4, 1, -5, 9, 2, -6, 5, 3]
    six = [(7, 2.5, -3), (-1, -0.125, 2**35)]
    lines = run(board, tmp_path, "import compiler_checks as c\n"
                + "".join(f"print(c.printf_mixed{case!r})\n" for case in cases)
                + f"print(c.va_ten({ten!r}))\n"
                + "".join(f"print(c.va_six_named{case!r})\n" for case in six))
    want = [f"{i}|{f32(d):.3f}|{big}|{s}|{chr(ch)}|{f32(g):g}" for i, d, big, s, ch, g in cases]
    want.append(str(sum(v * (k + 1) for k, v in enumerate(ten))))
    for i, x, ll in six:
        value = 1 + 10 * 2 + 100 * 3 + 1000 * 4 + 10000 * 5 + 100000 * 6 + i * 1e6 + f32(x) * 1e7 + ll * 1e8
        want.append(str(bits(value)))
    assert lines == want


def test_float_constant_select(board: QemuBoard, tmp_path: Path) -> None:
    """A select between two float constants, and copysignf: clang 22's backend crashes on them
    ("Cannot select ... TargetConstantPool"); the driver compiles such a file again with the DAG
    combiner off, and the code must then be right."""
    lines = run(board, tmp_path, "import compiler_checks as c\n"
                "for a in [(1, 1.5, -2.0), (0, -2.25, 3.0), (1, 0.0, -0.0)]:\n"
                "    print(c.float_select(*a))\n")
    assert lines == ["(0.5, -1.5)", "(-0.5, 2.25)", "(0.5, -0.0)"]


def test_64_bit_integers_and_doubles(board: QemuBoard, tmp_path: Path) -> None:
    """ci/esp32core/libgcc64.c (64-bit division: 32-bit hardware divide, or shift and subtract) and
    libgcc's soft double (the ESP32's FPU is single precision), against CPython's arithmetic."""
    pairs = [(7, 2), (-7, 2), (2**62 + 12345, 3), (-(2**50) - 1, 2**33 + 7), (2**63 - 1, -1), (123456789, 2**40),
             (-(2**63), 7), (0x0123456789ABCDEF, 0x10)]
    lines = run(board, tmp_path, "import compiler_checks as c\n"
                + "".join(f"print(c.int64_ops({a}, {b}))\n" for a, b in pairs))

    def wrap(v: int) -> int:
        return (v + 2**63) % 2**64 - 2**63

    want = []
    for a, b in pairs:
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C truncates toward zero
        uq = (a % 2**64) // (b % 2**64)
        want.append(str((q, a - q * b, uq, wrap(a * b), bits(a / b))))
    assert lines == want


def test_alloca_after_the_window_spilled(board: QemuBoard, tmp_path: Path) -> None:
    """MOVSP with the caller's window in memory raises the Alloca exception: without the handler
    in ci/esp32core/port/startup.S the board stops with EXCCAUSE 5."""
    n = 40

    def late(k: int) -> int:
        r = sum(j & 3 for j in range(1, 24 + (k & 3) + 1))
        s = sum((k * 7 + i) & 255 for i in range(16))
        return r + s + (late(k - 1) if k else 0)

    assert run(board, tmp_path, f"import compiler_checks as c\nprint(c.alloca_after_spill({n}))\n") == [str(late(n))]


def test_collector_sees_pointers_held_in_register_windows(board: QemuBoard, tmp_path: Path) -> None:
    """Deep Python recursion keeps objects alive only in frames whose windows the collector must
    spill first (ci/esp32core/port/gccollect.c); every object must come back intact after collections
    made at every depth, and exceptions (nlr: setjmp/longjmp across windows) unwind through them."""
    lines = run(board, tmp_path, """
import gc

def down(n):
    keep = [n] * 3 + [bytearray(b"%d" % n)]
    if n:
        r = down(n - 1)
    else:
        for _ in range(3):
            junk = [bytearray(64) for _ in range(200)]
            gc.collect()
        r = 0
    assert keep[:3] == [n] * 3 and keep[3] == b"%d" % n, (n, keep)
    return r + n

def fail(n):
    if n == 0:
        raise ValueError("bottom")
    try:
        return fail(n - 1)
    finally:
        gc.collect()

print(down(20))
try:
    fail(25)
except ValueError as e:
    print("unwound", e)
""")
    assert lines == [str(sum(range(21))), "unwound bottom"]

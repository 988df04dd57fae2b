"""Every MicroPython-side test script in tests/mp runs on the firmware and prints exactly its .exp."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import MP_TESTS, MicroPython

SCRIPTS = sorted(MP_TESTS.glob("ncnn_mp_*.py"))


def test_every_script_has_expected_output() -> None:
    assert SCRIPTS, "no MicroPython test scripts found"
    missing = [s.name for s in SCRIPTS if not s.with_suffix(".py.exp").exists()]
    assert not missing, f"scripts without a .exp file: {missing}"


def run_and_compare(mp: MicroPython, script: Path, timeout: float) -> None:
    r = mp.run(script, timeout=timeout)
    if r.stdout.startswith("SKIP"):
        pytest.skip(r.stdout.strip())
    assert r.returncode == 0, r.explain()
    expected = script.with_suffix(".py.exp").read_text()
    assert r.stdout == expected, r.explain()


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_script(micropython: MicroPython, digits_dir: Path, script: Path) -> None:
    run_and_compare(micropython, script, timeout=120)


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_script_under_valgrind(micropython_memcheck: MicroPython, digits_dir: Path, script: Path) -> None:
    """No invalid access, no use of uninitialised memory, no definitely-lost block."""
    run_and_compare(micropython_memcheck, script, timeout=900)

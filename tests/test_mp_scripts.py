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


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_script(micropython: MicroPython, digits_dir: Path, script: Path) -> None:
    r = micropython.run(script)
    if r.stdout.startswith("SKIP"):
        pytest.skip(r.stdout.strip())
    assert r.returncode == 0, r.explain()
    expected = script.with_suffix(".py.exp").read_text()
    assert r.stdout == expected, r.explain()

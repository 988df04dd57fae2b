# SPDX-License-Identifier: MIT
"""Every MicroPython-side test script in tests/mp runs on the firmware and prints exactly its .exp."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import MNIST_FILES, MP_TESTS, MicroPython, QemuBoard, expected_output, shared_models, skip_reason

SCRIPTS = sorted(MP_TESTS.glob("ncnn_mp_*.py"))


def test_every_script_has_expected_output() -> None:
    assert SCRIPTS, "no MicroPython test scripts found"
    missing = [s.name for s in SCRIPTS if not s.with_suffix(".py.exp").exists()]
    assert not missing, f"scripts without a .exp file: {missing}"


def needs_shared_models(script: Path) -> None:
    """A script that reads the team's models (NCNN_MP_SHARED_MODELS, e.g. + "/mnist")
    prints SKIP without them: skipped here, or failed under CI (conftest.shared_models)."""
    source = script.read_text()
    if "NCNN_MP_SHARED_MODELS" in source:
        for sub in ("mnist", "bench", "real"):
            if f'"/{sub}' in source:
                shared_models(sub, *(MNIST_FILES if sub == "mnist" else ()))


def run_and_compare(mp: MicroPython | QemuBoard, script: Path, timeout: float, target: str = "unix") -> None:
    needs_shared_models(script)
    r = mp.run(script, timeout=timeout)
    skipped = skip_reason(r)
    if skipped:
        pytest.skip(skipped)
    assert r.returncode == 0, r.explain()
    assert r.stdout == expected_output(script, target).read_text(), r.explain()


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_script(micropython: MicroPython, digits_dir: Path, script: Path) -> None:
    run_and_compare(micropython, script, timeout=120)


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_script_under_valgrind(micropython_memcheck: MicroPython, digits_dir: Path, script: Path) -> None:
    """No invalid access, no use of uninitialised memory, no definitely-lost block."""
    run_and_compare(micropython_memcheck, script, timeout=900)


@pytest.mark.mcu
@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_script_on_mcu(mcu: QemuBoard, digits_dir: Path, script: Path) -> None:
    """The same scripts on the bare-metal firmwares, Cortex-M3 and RISC-V: the same output
    (scripts that need what the build left out print SKIP)."""
    run_and_compare(mcu, script, timeout=300, target=mcu.profile)

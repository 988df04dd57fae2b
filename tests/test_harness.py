# SPDX-License-Identifier: MIT
"""The harness's own rules, without a firmware: when a script's SKIP counts as a skip, which
expected output a board's run is held to."""

from __future__ import annotations

from pathlib import Path

import pytest

import conftest
from conftest import Result, expected_output, shared_models, shared_models_if_here, skip_reason
from test_mp_scripts import run_and_compare


class FakeBoard:
    """Stands in for MicroPython/QemuBoard: every run ends as `result` says."""

    def __init__(self, result: Result) -> None:
        self.result = result

    def run(self, script: Path, timeout: float = 0) -> Result:
        return self.result


def test_skip_counts_from_a_normal_end_only() -> None:
    assert skip_reason(Result(0, "SKIP: needs ncnn built with NCNN_STRING\n", "")) == \
        "SKIP: needs ncnn built with NCNN_STRING"
    assert skip_reason(Result(0, "SKIP: a\nSKIP: b\n", "")) == "SKIP: a; SKIP: b"
    for returncode, stderr in [(1, "Traceback ...\nOSError: 5"),      # printed SKIP, then raised
                               (-11, ""),                             # then crashed (SIGSEGV)
                               (86, "ERROR: AddressSanitizer: heap-use-after-free"),
                               (99, "==1== Invalid read of size 4"),  # valgrind's report
                               (124, "no answer in time")]:           # a QEMU run that did not end
        assert skip_reason(Result(returncode, "SKIP: needs ncnn built with NCNN_STRING\n", stderr)) is None, returncode
    assert skip_reason(Result(0, "SKIP: x\nthen it ran on\n", "")) is None  # not only SKIP lines
    assert skip_reason(Result(0, "ran\nSKIP\n", "")) is None
    assert skip_reason(Result(0, "", "")) is None


def outcome(result: Result, script: Path) -> str:
    """What test_mp_scripts makes of a run that ended so (a skip must not escape: pytest
    would count this test as skipped rather than failed)."""
    try:
        run_and_compare(FakeBoard(result), script, timeout=1)  # type: ignore[arg-type]
    except pytest.skip.Exception:
        return "skipped"
    except AssertionError:
        return "failed"
    return "passed"


def test_skip_then_crash_fails_the_script(tmp_path: Path) -> None:
    script = tmp_path / "ncnn_mp_fake.py"
    script.write_text("print('SKIP: x')\n")
    (tmp_path / "ncnn_mp_fake.py.exp").write_text("what the script prints when it runs\n")
    assert outcome(Result(0, "SKIP: x\n", ""), script) == "skipped"
    for returncode in (1, -6, 86, 99):
        assert outcome(Result(returncode, "SKIP: x\n", "report"), script) == "failed", returncode


def test_no_tests_collected_fails_the_whole_suite() -> None:
    """ci/tool.py: pytest's exit 5 (nothing collected) fails `make test` and .ci/run, which
    select nothing; a user's selection that matches nothing ends in success."""
    from ci import tool

    for whole in ([], ["-q"], ["-x", "--durations=0"], ["-p", "no:cacheprovider"]):
        assert not tool.selects_tests(whole), whole
        assert tool.no_tests_collected(5, whole) == 5, whole
    for chosen in (["-k", "nothingmatches"], ["-knothing"], ["-m", "mcu"], ["--keyword=x"], ["-q", "tests/test_oom.py"],
                   ["tests/test_oom.py::test_tiny_heaps"], ["--deselect", "tests/test_oom.py::test_tiny_heaps"]):
        assert tool.selects_tests(chosen), chosen
        assert tool.no_tests_collected(5, chosen) == 0, chosen
    assert tool.no_tests_collected(1, ["-k", "x"]) == 1 and tool.no_tests_collected(0, []) == 0


def test_missing_models_skip_here_and_fail_under_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mnist").mkdir()
    (tmp_path / "mnist" / "mnist.param").write_text("7767517\n")
    monkeypatch.setattr(conftest, "SHARED_MODELS", tmp_path)
    monkeypatch.delenv("CI", raising=False)
    assert shared_models("mnist", "mnist.param") == tmp_path / "mnist"
    with pytest.raises(pytest.skip.Exception, match=str(tmp_path / "mnist" / "mnist.bin")):
        shared_models("mnist", "mnist.param", "mnist.bin")
    assert shared_models_if_here("bench") is None
    monkeypatch.setenv("CI", "1")
    assert shared_models("mnist", "mnist.param") == tmp_path / "mnist"
    for call in (lambda: shared_models("bench"), lambda: shared_models_if_here("bench")):
        with pytest.raises(pytest.fail.Exception, match=str(tmp_path / "bench")):
            call()


def test_expected_output_of_a_profile_falls_back_to_its_base(tmp_path: Path) -> None:
    """A board's own NAME.py.PROFILE.exp wins; a profile without one is held to its base
    profile's (rv32 is built with qemu's ncnn options), then to NAME.py.exp."""
    script = tmp_path / "ncnn_mp_x.py"
    plain, qemu, rv32 = (tmp_path / f"ncnn_mp_x.py{suffix}.exp" for suffix in ("", ".qemu", ".rv32"))
    plain.write_text("desktop\n")
    assert expected_output(script, "rv32") == plain
    assert expected_output(script, "unix") == plain
    qemu.write_text("board\n")
    assert expected_output(script, "qemu") == qemu
    assert expected_output(script, "rv32") == qemu  # its base's
    assert expected_output(script, "qemu-nostring") == qemu
    assert expected_output(script, "unix") == plain
    rv32.write_text("risc-v\n")
    assert expected_output(script, "rv32") == rv32
    assert expected_output(script, "qemu") == qemu


def test_make_run_passes_arguments_and_heap(tmp_path: Path) -> None:
    """`make run SCRIPT=... ARGS=... HEAP=...` (ci/tool.py run): the script gets its arguments
    and the heap asked for; a QEMU board's run refuses arguments rather than dropping them."""
    import subprocess
    import sys

    script = tmp_path / "args.py"
    script.write_text("import gc, sys\nprint(sys.argv[1:], gc.mem_free() + gc.mem_alloc() > 15 * 2**20)\n")
    tool = [sys.executable, "-m", "ci.tool", "run"]
    r = subprocess.run([*tool, "--heap", "16M", str(script), "a b", "c"], capture_output=True, text=True, cwd=conftest.REPO)
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "['a b', 'c'] True", r
    r = subprocess.run([*tool, str(script)], capture_output=True, text=True, cwd=conftest.REPO)
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "[] False", r
    r = subprocess.run([*tool, "--profile", "qemu", str(script), "x"], capture_output=True, text=True,
                       cwd=conftest.REPO)
    assert r.returncode != 0 and "takes no arguments" in r.stdout + r.stderr, r

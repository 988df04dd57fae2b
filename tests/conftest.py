# SPDX-License-Identifier: MIT
"""The harness: builds (or reuses) the firmware once and runs MicroPython scripts with it."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from ci.common import PROFILES, SHARED_MODELS  # (SHARED_MODELS: ../shared/models, or NCNN_MP_SHARED_MODELS)
from ci.testenv import MICROPYPATH, script_env

REPO = Path(__file__).resolve().parent.parent
MP_TESTS = REPO / "tests" / "mp"


def _shared_missing(sub: str, files: tuple[str, ...]) -> Path | None:
    """The first of SHARED_MODELS/sub and its files that is not here, or None."""
    folder = SHARED_MODELS / sub
    return next((p for p in [folder, *(folder / f for f in files)] if not p.exists()), None)


def _missing_models(path: Path) -> str:
    return (f"{path} is missing: the team's models (../shared/models; NCNN_MP_SHARED_MODELS "
            f"names another folder) are not here")


def shared_models(sub: str, *files: str) -> Path:
    """The folder `sub` of the team's models (mnist, bench, real), checked to hold `files`.
    Missing, the test is skipped on a developer's machine; with CI set (any non-empty
    value) it fails, naming the missing path: a CI without the models would otherwise
    pass with the tests that need them never run."""
    missing = _shared_missing(sub, files)
    if missing is None:
        return SHARED_MODELS / sub
    if os.environ.get("CI"):
        pytest.fail(_missing_models(missing) + " (CI is set: that is a failure)", pytrace=False)
    pytest.skip(_missing_models(missing))


def shared_models_if_here(sub: str, *files: str) -> Path | None:
    """The same rule for a test that also runs without the models (the loader fuzzer:
    then on the digits model alone): None where shared_models would skip."""
    if _shared_missing(sub, files) is not None and not os.environ.get("CI"):
        return None
    return shared_models(sub, *files)


@dataclass
class Served:
    """An HTTP server on 127.0.0.1: its URL, and the paths asked of it with their status."""
    url: str
    requests: list[tuple[str, int]]


@contextlib.contextmanager
def serve_folder(folder: Path, limit: float = 600) -> Iterator[Served]:
    """`folder` served over HTTP on 127.0.0.1 (a port the system picks) inside the `with`, and
    for `limit` seconds at most (a test that hangs does not keep it forever)."""
    asked: list[tuple[str, int]] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
            asked.append((self.path, int(code)))

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    deadline = threading.Timer(limit, server.shutdown)
    deadline.start()
    try:
        yield Served(f"http://127.0.0.1:{server.server_address[1]}", asked)
    finally:
        deadline.cancel()
        server.shutdown()
        server.server_close()


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    def explain(self) -> str:
        return f"exit code {self.returncode}\n--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}"


def expected_output(script: Path, target: str) -> Path:
    """The file holding what `script` must print on the `target` profile's firmware. A target
    whose ncnn was built differently (no NCNN_STDIO: other exceptions for file paths) has
    its own beside the script, NAME.py.TARGET.exp; a profile without one prints what its base
    profile prints (rv32 is built with qemu's ncnn options and has qemu's, rv32-nostring
    qemu-nostring's); else NAME.py.exp."""
    name: str | None = target
    while name is not None:
        own = script.with_suffix(f".py.{name}.exp")
        if own.exists():
            return own
        name = PROFILES.get(name, {}).get("base")
    return script.with_suffix(".py.exp")


def skip_reason(r: Result) -> str | None:
    """The SKIP line(s) of a script that skipped itself (mptest.require and the like), or
    None when it did not. A skip counts only from a run that ended normally (exit 0, or a
    QEMU run without traceback) and printed nothing but SKIP lines: a script that prints
    SKIP and then crashes, or whose run ends in a sanitizer's (86) or valgrind's (99)
    report, has failed, not skipped."""
    lines = r.stdout.splitlines()
    if r.returncode != 0 or not lines or not all(ln.startswith("SKIP") for ln in lines):
        return None
    return "; ".join(lines)


NO_ASLR = ["setarch", "-R"] if shutil.which("setarch") else []
VALGRIND = ["valgrind", "-q", f"--suppressions={REPO / 'ci' / 'valgrind.supp'}", "--error-exitcode=99",
            "--leak-check=full", "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite"]


class MicroPython:
    """Runs scripts with the ncnn_mp firmware: `run` for a file, `run_source` for a string.
    With valgrind=True every run is under valgrind's memcheck (exit code 99 on a report)."""

    def __init__(self, binary: Path, env: dict[str, str], valgrind: bool = False) -> None:
        self.binary = binary
        self.env = env
        self.valgrind = valgrind

    def run(self, script: Path, *args: str, timeout: float = 120, heapsize: str | None = None,
            cwd: Path | None = None) -> Result:
        # Without address randomisation: ncnn_mp keys its GC roots by C-heap addresses, so
        # with it the heap's bookkeeping (and the soak test's heap figure) varies by run.
        cmd = NO_ASLR + (VALGRIND if self.valgrind else []) + [str(self.binary)]
        timeout *= SANITIZED_SLOWER
        if heapsize:
            cmd += ["-X", f"heapsize={heapsize}"]
        cmd += [str(script), *args]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                               env=self.env, cwd=cwd or script.parent, errors="replace")
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            pytest.fail(f"{script.name} did not finish within {timeout} s; output so far:\n{out}")
        return Result(p.returncode, p.stdout, p.stderr)

    def run_source(self, source: str, *args: str, **kw: object) -> Result:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "snippet.py"
            path.write_text(source)
            return self.run(path, *args, **kw)  # type: ignore[arg-type]

    def check(self, source: str, *args: str, **kw: object) -> str:
        """Run source that must succeed; return its stdout, or fail showing the traceback."""
        r = self.run_source(source, *args, **kw)
        assert r.returncode == 0, r.explain()
        return r.stdout


class QemuBoard:
    """Runs scripts on a bare-metal QEMU firmware through its raw REPL (ci/qemu.py): no
    arguments, no environment, no files but the frozen ones (tests/mp/mptest.py's read)."""

    def __init__(self, profile: str) -> None:
        self.profile = profile
        self.binary = _firmware(profile)

    def run(self, script: Path, timeout: float = 300) -> Result:
        from ci.qemu import run_script

        r = run_script(self.profile, self.binary, script.read_bytes(), timeout=timeout)
        return Result(r.returncode, r.output, f"(QEMU run of {r.seconds:.1f} s)")

    def run_sequence(self, sources: list[str], timeout: float = 300) -> list[Result]:
        """Each script in turn in one QEMU run, with a soft reboot (Ctrl-D at the raw prompt)
        between two: what survives a reboot on a real board survives it here. One Result per
        script (ci/qemu.py's run_scripts: 124 no answer in time, 125 not run)."""
        from ci.qemu import run_scripts

        runs = run_scripts(self.profile, self.binary, [s.encode() for s in sources], timeout=timeout)
        return [Result(r.returncode, r.output, f"(script {i} of a QEMU run: {r.seconds:.1f} s)")
                for i, r in enumerate(runs, 1)]


def _firmware(profile: str = "unix") -> Path:
    name = profile.upper().replace("-", "_")
    given = os.environ.get(f"NCNN_MP_FIRMWARE_{name}" if profile != "unix" else "NCNN_MP_FIRMWARE")
    if given:
        return Path(given)
    # pytest run directly: build (or reuse) the firmware the way `make test` does.
    p = subprocess.run([sys.executable, "-m", "ci.tool", "firmware", "--profile", profile],
                       stdout=subprocess.PIPE, text=True, cwd=REPO)
    if p.returncode != 0:
        pytest.exit("building the firmware failed (see above)", returncode=1)
    return Path(p.stdout.strip().splitlines()[-1])


# Under the sanitizer firmware (make sanitize: profile asan), any report ends the process
# with status 86, which no script's own failure uses.
def tool(*args: str, env: dict[str, str] | None = None, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """`python3 -m ci.tool ARGS` from the checkout, as `make` runs it, with `env` added."""
    return subprocess.run([sys.executable, "-m", "ci.tool", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=timeout, env=dict(os.environ, **(env or {})))


# Whether this is make sanitize's run (ci/tool.py run_sanitized sets the profile for its pytest).
SANITIZED = os.environ.get("NCNN_MP_PROFILE") == "asan"
# A script's timeout is a guard against a hang, not a speed check: under make sanitize the
# firmware (ASan and UBSan) runs two to three times slower, and beside other work (two runs at a
# time) ncnn_mp_soak.py, 66 s of CPU there, overran 120 s.
SANITIZED_SLOWER = 3 if SANITIZED else 1
SANITIZER_ENV = {
    "NCNN_MP_SANITIZED": "1",
    "ASAN_OPTIONS": "exitcode=86:detect_leaks=1:abort_on_error=0",
    "UBSAN_OPTIONS": f"halt_on_error=1:exitcode=86:print_stacktrace=1:suppressions={REPO / 'ci' / 'ubsan.supp'}",
}


def _script_env() -> dict[str, str]:
    """The environment of the MicroPython scripts the tests run: MICROPYPATH, where they import
    the examples' libraries and tests/mp's helpers from (ci/testenv.py)."""
    env = dict(os.environ, MICROPYPATH=MICROPYPATH)
    if SANITIZED:
        env.update(SANITIZER_ENV)
    env["NCNN_MP_SHARED_MODELS"] = str(SHARED_MODELS) if SHARED_MODELS.is_dir() else ""
    env.setdefault("NCNN_MP_DIGITS", str(REPO / "build" / "models" / "digits"))
    return env


@pytest.fixture(scope="session")
def micropython() -> MicroPython:
    return MicroPython(_firmware(), _script_env())


@pytest.fixture(scope="session")
def micropython_gil() -> MicroPython:
    """The unix firmware built with a GIL, as esp32's MicroPython has (profile unix-gil); under
    make sanitize the sanitizer firmware with one (asan-gil)."""
    return MicroPython(_firmware("asan-gil" if SANITIZED else "unix-gil"), _script_env())


@pytest.fixture(scope="session")
def micropython_memcheck() -> MicroPython:
    """The same firmware built for valgrind (profile memcheck), every run under memcheck."""
    return MicroPython(_firmware("memcheck"), dict(_script_env(), NCNN_MP_UNDER_VALGRIND="1"), valgrind=True)


@pytest.fixture(scope="session", params=["qemu", "qemu-nostring", "rv32", "rv32-nostring", "qemu-m4f", "xtensa", "esp32core"])
def mcu(request: pytest.FixtureRequest) -> QemuBoard:
    """The MCU firmwares under QEMU, Cortex-M3 and RISC-V rv32imac, each with ncnn with names
    and with the smallest build without, the hard-float Cortex-M4F board and the Xtensa lx106
    board (qemu's ncnn)."""
    return QemuBoard(request.param)


@pytest.fixture(scope="session")
def digits_dir() -> Path:
    d = Path(os.environ.get("NCNN_MP_DIGITS", REPO / "build" / "models" / "digits"))
    if not (d / "digits.param").exists():
        subprocess.run([sys.executable, str(REPO / "examples" / "make_digits_model.py"), str(d)], check=True,
                       env=script_env())
    return d


MNIST_FILES = ("mnist.param", "mnist.bin", *(f"{d}.pgm" for d in range(10)))


@pytest.fixture(scope="session")
def mnist_dir() -> Path:
    return shared_models("mnist", *MNIST_FILES)

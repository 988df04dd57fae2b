# SPDX-License-Identifier: MIT
"""What the fuzz drivers share: running one batch of cases in one MicroPython process,
telling a crash or a hang from an ordinary end, and finding which case did it.

The drivers (loader_fuzz.py, api_fuzz.py) are CPython programs; the cases run on the
firmware through conftest's MicroPython class, many per process. Each runner writes a
results file, a line before and after every case, so a process that dies or hangs
still says which case it was in.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from conftest import SHARED_MODELS, MicroPython, _firmware, _script_env  # (tests/: pyproject.toml's pythonpath)

FUZZ = Path(__file__).resolve().parent
TESTS = FUZZ.parent

__all__ = ["MicroPython", "Run", "SHARED_MODELS", "firmware", "regressions", "run_batch", "save_regression", "shrink"]

REGRESSIONS = FUZZ / "regressions"

# Address space for a fuzzed process. Mutated models ask ncnn for absurd allocations
# (a 2**31-element weight Mat); with Linux's overcommit such a malloc succeeds and the
# zero-filling DataReader then touches gigabytes. Under this limit the allocation fails,
# which is the path worth testing. The largest benchmark net needs about 130 MB.
ADDRESS_SPACE = 1 << 30
_LIMITED = Path(tempfile.mkdtemp(prefix="ncnn_mp_fuzz_"))
atexit.register(shutil.rmtree, _LIMITED, True)
# Runs a command under the limit (gdb's exec-wrapper, and the firmware wrappers below).
LIMIT_WRAPPER = _LIMITED / "limit.sh"
LIMIT_WRAPPER.write_text(f'#!/bin/sh\nulimit -v {ADDRESS_SPACE // 1024}\nexec "$@"\n')
LIMIT_WRAPPER.chmod(0o755)


# AddressSanitizer reserves terabytes of address space for its shadow memory: under
# `ulimit -v` it cannot start. Its allocator sets the same bound itself.
SANITIZER_LIMIT = f"allocator_may_return_null=1:max_allocation_size_mb={ADDRESS_SPACE >> 20}"


def limited(mp: MicroPython) -> MicroPython:
    """The same firmware, run under the address-space limit (not under valgrind, which
    needs address space of its own)."""
    if sanitized(mp):
        if SANITIZER_LIMIT in mp.env.get("ASAN_OPTIONS", ""):
            return mp
        options = ":".join(o for o in (mp.env.get("ASAN_OPTIONS"), SANITIZER_LIMIT) if o)
        return MicroPython(mp.binary, dict(mp.env, ASAN_OPTIONS=options), valgrind=False)
    if mp.valgrind or mp.binary.parent == _LIMITED:
        return mp
    wrapper = _LIMITED / f"micropython-{abs(hash(str(mp.binary)))}"
    if not wrapper.exists():  # written once: rewriting a script another thread runs is ETXTBSY
        tmp = wrapper.with_suffix(".tmp")
        tmp.write_text(f'#!/bin/sh\nexec "{LIMIT_WRAPPER}" "{mp.binary}" "$@"\n')
        tmp.chmod(0o755)
        tmp.replace(wrapper)
    return MicroPython(wrapper, mp.env, valgrind=False)


# A valgrind report line with text, other than the "Thread N:" heading.
VALGRIND_LINE = re.compile(r"==\d+== +(?!Thread \d+:)(\S.*)")


@dataclass
class Run:
    """How one batch process ended and what its results file says."""

    returncode: int | None  # None: it hung (killed at the timeout)
    started: list[int] = field(default_factory=list)
    results: dict[int, str] = field(default_factory=dict)
    health: dict[int, str] = field(default_factory=dict)
    extra: list[str] = field(default_factory=list)  # runner-specific lines (FAIL ...)
    done: str | None = None  # the DONE line's payload
    stderr: str = ""

    @property
    def died(self) -> bool:
        """Crashed (a signal), hung, or stopped before its DONE line."""
        return self.returncode != 0 or self.done is None

    def how(self) -> str:
        if self.returncode is None:
            return "hang"
        if self.returncode < 0:
            return f"crash (signal {-self.returncode})"
        if self.returncode != 0:
            return f"exit {self.returncode} ({self.first_report_line()[:200]})"
        return "no DONE line"

    def first_report_line(self) -> str:
        """What the process said last, or for a valgrind report its first finding and
        where (its last line is a bare "==pid==")."""
        lines = self.stderr.strip().splitlines()
        found = [m.group(1) for ln in lines if (m := VALGRIND_LINE.match(ln))]
        if found:
            return found[0] + (" " + found[1] if len(found) > 1 and found[1].startswith("at ") else "")
        return lines[-1] if lines else "?"

    def suspect(self) -> int | None:
        """The case that was running when the process died (None: it died between cases)."""
        open_cases = [c for c in self.started if c not in self.results]
        return open_cases[-1] if open_cases else None


def parse_results(text: str, run: Run) -> None:
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "S":
            run.started.append(int(rest))
        elif kind == "R":
            cid, _, outcome = rest.partition(" ")
            run.results[int(cid)] = outcome
        elif kind == "H":
            cid, _, verdict = rest.partition(" ")
            run.health[int(cid)] = verdict
        elif kind == "DONE":
            run.done = rest
        elif line:
            run.extra.append(line)


def run_batch(mp: MicroPython, runner: Path, payload: bytes, timeout: float, heapsize: str | None = None) -> Run:
    """Run runner on payload (written to a file) in one firmware process."""
    with tempfile.TemporaryDirectory(prefix="ncnn_mp_fuzz_") as d:
        batch, results = Path(d) / "batch", Path(d) / "results"
        batch.write_bytes(payload)
        try:
            r = limited(mp).run(runner, str(batch), str(results), timeout=timeout, heapsize=heapsize)
            run = Run(r.returncode, stderr=r.stderr)
        except pytest.fail.Exception as e:  # MicroPython.run's timeout
            run = Run(None, stderr=str(e))
        if results.exists():
            parse_results(results.read_text(errors="replace"), run)
    return run


T = TypeVar("T")


def shrink(items: list[T], fails: Callable[[list[T]], bool], budget: int = 200) -> list[T]:
    """A smallest-found sublist of items (order kept) for which fails() is still true:
    delta debugging (Zeller's ddmin), at most `budget` calls of fails()."""
    n = 2
    calls = 0
    while len(items) >= 2 and calls < budget:
        chunk = max(1, len(items) // n)
        reduced = False
        for start in range(0, len(items), chunk):
            rest = items[:start] + items[start + chunk:]
            calls += 1
            if rest and fails(rest):
                items, n, reduced = rest, max(n - 1, 2), True
                break
            if calls >= budget:
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(n * 2, len(items))
    return items


# Where a crash happened: the innermost frame that is ncnn's, ncnn_mp's or MicroPython's
# (libc, libstdc++, the dynamic loader and inlined SIMD intrinsics are looked through: a
# double free is reported by malloc, but it is the caller that freed twice).
_RETURN_TYPE = r"(?:(?:void|int|float|bool|unsigned|signed|char|long|short|const)\s+)*"  # function templates show one
_FRAME = re.compile(r"^#\d+\s+(?:0x[0-9a-f]+ in )?" + _RETURN_TYPE + r"([^\s(]+)\s?\(")
_SYSTEM = re.compile(r"^(__|_int_|_dl_|_mm|malloc|free|cfree|realloc|memalign|posix_memalign|raise|abort|operator |std::|"
                     r"void std::|mem(move|cpy|set|cmp)|str(len|cmp|ncmp|cpy)|GOMP_|\?\?)")


def crash_site(frames: list[str]) -> str:
    for f in frames:
        m = _FRAME.match(f)
        if m and not _SYSTEM.match(m.group(1)) and "/libc" not in f and "./nptl" not in f:
            return m.group(1)
    return "?"


@dataclass
class Backtrace:
    signal: str  # e.g. SIGSEGV; "" when the run did not crash under gdb
    frames: list[str]

    @property
    def site(self) -> str:
        return crash_site(self.frames)

    @property
    def heap_corruption(self) -> bool:
        return any("malloc_printerr" in f for f in self.frames)


def backtrace(mp: MicroPython, runner: Path, payload: bytes, timeout: float = 300) -> Backtrace:
    """Run a batch under gdb with mp's firmware (one built with symbols: profile memcheck)."""
    with tempfile.TemporaryDirectory(prefix="ncnn_mp_fuzz_") as d:
        batch = Path(d) / "batch"
        batch.write_bytes(payload)
        cmd = ["gdb", "-batch", "-nx", "-ex", f"set exec-wrapper {LIMIT_WRAPPER}", "-ex", "run", "-ex", "bt 40",
               "--args", str(mp.binary), str(runner), str(batch), str(Path(d) / "results")]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout, env=mp.env,
                               cwd=runner.parent)
        except subprocess.TimeoutExpired:
            return Backtrace("hang", [])
    sig = re.search(r"received signal (SIG\w+)", p.stdout)
    return Backtrace(sig.group(1) if sig else "", [ln for ln in p.stdout.splitlines() if ln.startswith("#")])


def first_memory_error(mp: MicroPython, runner: Path, payload: bytes, timeout: float = 900) -> Backtrace | None:
    """Under valgrind (mp: the memcheck firmware), the stack of the first invalid access:
    the layer that wrote past a buffer, where gdb only sees the free() that choked on it."""
    with tempfile.TemporaryDirectory(prefix="ncnn_mp_fuzz_") as d:
        batch = Path(d) / "batch"
        batch.write_bytes(payload)
        cmd = ["valgrind", "-q", "--error-limit=no", "--num-callers=40", str(mp.binary), str(runner), str(batch), str(Path(d) / "results")]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout, env=mp.env,
                               cwd=runner.parent)
        except subprocess.TimeoutExpired:
            return None
    lines = p.stderr.splitlines()
    for i, ln in enumerate(lines):
        if re.search(r"Invalid (read|write|free)|uninitialised|Conditional jump|Process terminating", ln):
            frames: list[str] = []
            for f in lines[i + 1:i + 40]:
                m = re.search(r"(?:at|by) 0x[0-9A-F]+: " + _RETURN_TYPE + r"([^\s(]+)", f)
                if m:
                    frames.append(f"#{len(frames)} {m.group(1)} (")
            return Backtrace(ln.split("== ", 1)[-1], frames)
    return None


_SANITIZER_ERROR = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer): (.*)|: runtime error: (.*)")
_SANITIZER_FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ in (.+?)(?: (/\S+)| \(\S+)?$")


def sanitized(mp: MicroPython) -> bool:
    """mp is the AddressSanitizer + UndefinedBehaviorSanitizer firmware (profile asan)."""
    return bool(mp.env.get("NCNN_MP_SANITIZED"))


def sanitizer_report(stderr: str) -> Backtrace | None:
    """The first AddressSanitizer, LeakSanitizer or UBSan report in a run's stderr: its
    kind and stack (frames as gdb writes them, "#N name (", for crash_site and known_class).
    The sanitizers report the first bad access itself, so no valgrind replay is needed."""
    lines = stderr.splitlines()
    for i, ln in enumerate(lines):
        m = _SANITIZER_ERROR.search(ln)
        if m is None:
            continue
        frames: list[str] = []
        for f in lines[i + 1:i + 60]:
            fm = _SANITIZER_FRAME.match(f)
            if fm:
                name, path = fm.group(1), fm.group(2) or ""
                if "::" not in name and "/src/layer/" in path:  # an inlined helper of a layer: ncnn's namespace
                    name = "ncnn::" + name
                frames.append(f"#{len(frames)} {name if '(' in name else name + ' ('}")
            elif frames and not f.strip():
                break  # the end of the first stack
        return Backtrace(" ".join(g for g in m.groups() if g)[:120], frames)
    return None


def firmware(valgrind: bool = False) -> MicroPython:
    """The firmware the tests use: NCNN_MP_FIRMWARE(_MEMCHECK) if set, else built (or reused) by ci/tool.py."""
    if valgrind:
        return MicroPython(_firmware("memcheck"), dict(_script_env(), NCNN_MP_UNDER_VALGRIND="1"), valgrind=True)
    return MicroPython(_firmware(), _script_env())


def save_regression(name: str, data: dict[str, Any]) -> Path:
    REGRESSIONS.mkdir(exist_ok=True)
    path = REGRESSIONS / f"{name}.json"
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path


def regressions(prefix: str) -> list[Path]:
    return sorted(REGRESSIONS.glob(f"{prefix}-*.json")) if REGRESSIONS.is_dir() else []


def shared_models() -> Path | None:
    return SHARED_MODELS if SHARED_MODELS.is_dir() else None


def digits_dir() -> Path:
    # Absolute: the runners run in tests/fuzz, and make passes a path relative to the checkout.
    return Path(os.environ.get("NCNN_MP_DIGITS", TESTS.parent / "build" / "models" / "digits")).resolve()

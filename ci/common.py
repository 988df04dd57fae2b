# SPDX-License-Identifier: MIT
"""What every build step shares: the pins, the profiles, the cache, and how a step fails."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any, Iterable, Sequence

from ncnn_mp_tools.errors import SetupError as SetupError, fail as fail, say as say  # (ci's too)

REPO = Path(__file__).resolve().parent.parent
CI = REPO / "ci"
BUILD = REPO / "build"  # per-checkout outputs (firmware, generated models); gitignored
# The team's models (MNIST, benchmark structures, real nets) beside the checkout; never
# copied into it. NCNN_MP_SHARED_MODELS names another folder (tests: one that is missing).
SHARED_MODELS = Path(os.environ.get("NCNN_MP_SHARED_MODELS") or REPO.parent / "shared" / "models")


Settings = dict[str, Any]  # a table of ci/pins.toml or ci/profiles.toml


def load_toml(name: str) -> Settings:
    with open(CI / name, "rb") as f:
        return tomllib.load(f)


PINS = load_toml("pins.toml")
PROFILES = load_toml("profiles.toml")


# What makes a profile's board rather than its ncnn: the port, the compiler and C library,
# how the firmware links, and the QEMU machine it runs on.
BOARD_KEYS = ("port", "port_dir", "libgcc_from_source", "libc_from_source", "firmware", "cc", "debian_packages",
              "ncnn_toolchain", "link_libs", "make_vars", "qemu_system", "qemu_args", "qemu_console", "qemu_icount",
              "romfs_address", "mpy_arch")


def is_board(prof: Settings) -> bool:
    """A bare-metal board under QEMU (ports/qemu's boards, the Xtensa sim board's own port),
    not the Unix port: its scripts go through the raw REPL on the emulated console."""
    return bool(prof["port"] != "unix")


Models = Sequence[Path]  # .param files a firmware is sized to (make's MODELS=...)


def profile(name: str, models: Models = ()) -> Settings:
    """A profile's settings; `base = "other"` starts from another profile's, and a
    list `extra_<key>` is added to the base's list `<key>` (e.g. extra_make_vars);
    `board_of = "other"` then takes the BOARD_KEYS from that profile (rv32-nostring: the
    ncnn of qemu-nostring on the board of rv32). `models`: sized to them (_sized_to_models)."""
    return _sized_to_models(_merged(name), models)


def _merged(name: str) -> Settings:
    if name not in PROFILES:
        fail(f"unknown build profile '{name}'", f"choose one of: {', '.join(PROFILES)}")
    prof = dict(PROFILES[name])
    board_of = prof.pop("board_of", None)
    if "base" in prof:
        merged = _merged(prof.pop("base"))
        for key in [k for k in prof if k.startswith("extra_")]:
            base_key = key[len("extra_"):]
            merged[base_key] = merged.get(base_key, []) + prof.pop(key)
        merged.update(prof)
        prof = merged
    if board_of is not None:
        board = _merged(board_of)
        for key in BOARD_KEYS:
            prof.pop(key, None)
            if key in board:
                prof[key] = board[key]
    return prof


def _sized_to_models(prof: Settings, given: Models) -> Settings:
    """A profile that keeps only some ncnn layers gets those its models need added: the
    models in its `ncnn_models` (added to `ncnn_layers`), or those `given` (make's MODELS=...,
    which replaces `ncnn_layers`: a firmware sized to exactly those models).
    What a model needs is derived from ncnn's source for the profile's `ncnn_arch` (ncnn_mp_tools/layers.py,
    its table made by ci/ncnn_layers.py)."""
    listed = [Path(m.replace("{shared}", str(SHARED_MODELS))) for m in prof.get("ncnn_models", [])]
    if "ncnn_layers" not in prof or not (given or listed):
        return prof
    from ncnn_mp_tools.layers import model_layers, required

    missing = [m for m in listed if not m.exists()]
    if missing and os.environ.get("CI"):
        fail(f"the profile's ncnn_models are missing: {', '.join(map(str, missing))}",
             "CI needs ../shared/models beside the checkout")
    models = list(given) if given else [m for m in listed if m.exists()]
    for m in models:
        if not m.exists():
            fail(f"MODELS names {m}, which does not exist", "give the paths of your .param files")
    needed = required([layer for m in models for layer in model_layers(m)], prof["ncnn_arch"])
    prof = dict(prof)
    prof["ncnn_layers"] = sorted(set(needed) | (set() if given else set(prof["ncnn_layers"])))
    return prof


def cache_root() -> Path:
    """Big downloads and builds live here, outside the checkout, shared by every clone."""
    env = os.environ.get("NCNN_MP_CACHE")
    if env:
        root = Path(env)
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ncnn_mp"
    root.mkdir(parents=True, exist_ok=True)
    return root


def cmake_text(path: Path) -> str:
    """A CMake file's text followed by that of each file it include()s by a path relative to
    its own folder (${CMAKE_CURRENT_LIST_DIR}: a board's toolchain file and ci/board.common.cmake),
    so that a cache keyed on it sees a change to either."""
    text = path.read_text()
    parts = [text]
    for name in re.findall(r"^\s*include\(\$\{CMAKE_CURRENT_LIST_DIR\}/([^)\s]+)\)", text, re.M):
        included = (path.parent / name).resolve()
        parts.append(f"{included.name}\n{cmake_text(included)}")
    return "\n".join(parts)


def key_of(*parts: object) -> str:
    """A short stable digest of everything that changes a build's output."""
    h = hashlib.sha256(repr(parts).encode()).hexdigest()
    return h[:12]


@contextlib.contextmanager
def locked(path: Path, what: str):  # type: ignore[no-untyped-def]
    """Hold an exclusive lock on `path` (created if missing): a second build of the same
    cached thing waits for the first instead of deleting its files under it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for another process building {what}")
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# A cached build (an ncnn for some options, a venv for some pins) that no run has used for
# this long is removed by the next run that uses the same kind of cache: every change of
# options or pins leaves a new entry, ncnn's take ~40 MB and a venv ~550 MB.
STALE_DAYS = 14


def mark_used(entry: Path) -> None:
    """Note that a run used this cache entry now (prune_cache keeps what was used lately)."""
    (entry / ".used").touch()


def prune_cache(entries: Iterable[Path], keep: Path, days: float = STALE_DAYS) -> list[Path]:
    """Remove the cache entries (directories) not used for `days`, by their .used stamp
    (else their .done, else themselves), except `keep`; skip one whose <name>.lock beside it
    another process holds. Returns what was removed."""
    cutoff = time.time() - days * 86400
    removed = []
    for entry in entries:
        if entry == keep or not entry.is_dir():
            continue
        stamp = next((p for p in (entry / ".used", entry / ".done") if p.exists()), entry)
        if stamp.stat().st_mtime > cutoff:
            continue
        lock = entry.parent / f"{entry.name}.lock"
        with open(lock, "a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            say(f"removing a cached build no run used for {days:g} days: {entry}")
            shutil.rmtree(entry, ignore_errors=True)
            lock.unlink(missing_ok=True)
        removed.append(entry)
    return removed


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def run(cmd: Iterable[object], what: str, todo: str, *, cwd: Path | None = None,
        env: dict[str, str] | None = None, log: Path | None = None, progress: str | None = None) -> None:
    """Run a command; on failure stop with one line naming the step.

    With `log`, the command's output goes to that file and only progress lines
    matching the regex `progress` (e.g. cmake's "[ 42%]") are echoed, so long
    steps show how far they are without flooding the terminal.
    """
    argv = [str(c) for c in cmd]
    if log is None:
        rc = subprocess.call(argv, cwd=cwd, env=env)
        if rc != 0:
            fail(what, todo)
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    pattern = re.compile(progress) if progress else None
    last = ""
    with open(log, "w") as out:
        try:
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, errors="replace")
        except FileNotFoundError:
            fail(what, f"'{argv[0]}' is not installed; {todo}")
        assert proc.stdout is not None
        for line in proc.stdout:
            out.write(line)
            m = pattern.search(line) if pattern else None
            if m and m.group(0) != last:
                last = m.group(0)
                say(f"  {line.strip()[:110]}")
        rc = proc.wait()
    if rc != 0:
        lines = log.read_text(errors="replace").strip().splitlines()
        errors = [ln for ln in lines if re.search(r"\berror\b", ln, re.I)][:10]
        sys.stderr.write("\n".join(errors + ["..."] + lines[-8:]) + "\n")
        fail(what, f"{todo} (full log: {log})")

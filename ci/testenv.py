# SPDX-License-Identifier: MIT
"""The CPython venv that runs the test harness, mypy and the oracle (the `ncnn` wheel)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

from ci.common import BUILD, PINS, REPO, cache_root, fail, key_of, mark_used, prune_cache, run, say

# What the MicroPython scripts the harness runs on the Unix firmware import besides their own
# folder (MICROPYPATH replaces the port's default sys.path): the package ncnn_mp_lib (the
# decoders and helpers: the checkout's root), the examples' own modules (digits_layers, ...),
# tests/mp's helpers (mptest) for the fuzzers' and the soak's runners, and tests/shared_layers.py,
# which the oracle registers with both bindings. A board has these frozen in (ci/profiles.toml
# `frozen`); ".frozen" keeps the port's own first.
MICROPYPATH = ":".join([".frozen", str(REPO), str(REPO / "examples"), str(REPO / "tests" / "mp"),
                        str(REPO / "tests")])


def python_path() -> str:
    """PYTHONPATH for a CPython script of this checkout run on its own (a benchmark, a fuzzer's
    driver, the digits model's generator): pytest's `pythonpath` in pyproject.toml, the one list
    of where the tests import from (the checkout's root for ci and ncnn_mp_tools, ...)."""
    with open(REPO / "pyproject.toml", "rb") as f:
        entries = tomllib.load(f)["tool"]["pytest"]["ini_options"]["pythonpath"]
    return ":".join(str((REPO / e).resolve()) for e in entries)


def script_env(**extra: str) -> dict[str, str]:
    """This environment with PYTHONPATH (python_path()) and MICROPYPATH set for the scripts the
    tools run, and `extra` added."""
    return dict(os.environ, PYTHONPATH=python_path(), MICROPYPATH=MICROPYPATH, **extra)


def venv_python() -> Path:
    """Create (once) the pinned venv in the cache; return its python."""
    pins = PINS["python"]
    have = f"{sys.version_info.major}.{sys.version_info.minor}"
    if have != pins["python"]:
        fail(f"the pinned test venv is for CPython {pins['python']}, this is {have}",
             f"run with python{pins['python']} (or re-pin ci/pins.toml [python] for {have})")
    root = cache_root() / f"venv-{key_of(pins['requirements'], pins['no_deps'], sys.executable)}"
    python = root / "bin" / "python"
    if (root / ".done").exists():
        mark_used(root)
        prune_cache(cache_root().glob("venv-*"), keep=root)
        return python
    say(f"creating the test venv (pytest, mypy, numpy, scikit-learn, ncnn wheel): {root}")
    run([sys.executable, "-m", "venv", "--clear", root], "creating the venv failed",
        "install python3-venv (apt-get install python3-venv)")
    reqs = root / "requirements.txt"
    reqs.write_text("\n".join(pins["requirements"]) + "\n")
    no_deps = root / "requirements-no-deps.txt"
    no_deps.write_text("\n".join(pins["no_deps"]) + "\n")
    for listed, extra in ((reqs, []), (no_deps, ["--no-deps"])):
        run([python, "-m", "pip", "install", "--disable-pip-version-check", "--require-hashes",
             "--only-binary", ":all:", *extra, "-r", listed], "installing the pinned Python packages failed",
            "check that PyPI is reachable; a hash mismatch means ci/pins.toml needs re-pinning",
            log=cache_root() / "logs" / "venv-install.log", progress=r"^(Collecting|Installing) .*")
    (root / ".done").touch()
    prune_cache(cache_root().glob("venv-*"), keep=root)
    return python


def digits_model(python: Path | None = None) -> Path:
    """The demo's digits model (examples/make_digits_model.py), trained once into build/models."""
    out = BUILD / "models" / "digits"
    script = REPO / "examples" / "make_digits_model.py"
    stamp = out / "digits.param.bin"  # the last file the script writes
    sources = [*script.parent.glob("*.py"), REPO / "ncnn_mp_tools" / "param_to_bin.py"]
    if not stamp.exists() or stamp.stat().st_mtime < max(p.stat().st_mtime for p in sources):
        say("training the digits classifier and exporting it to ncnn's format")
        if subprocess.call([str(python or venv_python()), str(script), str(out)], env=script_env()) != 0:
            fail("generating the demo model failed", "see the Python traceback above")
    return out

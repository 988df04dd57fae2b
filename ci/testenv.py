"""The CPython venv that runs the test harness, mypy and the oracle (the `ncnn` wheel)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from common import BUILD, PINS, REPO, cache_root, fail, key_of, mark_used, prune_cache, run, say


def venv_python() -> Path:
    """Create (once) the pinned venv in the cache; return its python."""
    pins = PINS["python"]
    have = f"{sys.version_info.major}.{sys.version_info.minor}"
    if have != pins["python"]:
        fail(f"the pinned test venv is for CPython {pins['python']}, this is {have}",
             f"run with python{pins['python']} (or re-pin ci/pins.toml [python] for {have})")
    root = cache_root() / f"venv-{key_of(pins['requirements'], sys.executable)}"
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
    run([python, "-m", "pip", "install", "--disable-pip-version-check", "--require-hashes",
         "--only-binary", ":all:", "-r", reqs], "installing the pinned Python packages failed",
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
    if not stamp.exists() or stamp.stat().st_mtime < max(p.stat().st_mtime for p in script.parent.glob("*.py")):
        say("training the digits classifier and exporting it to ncnn's format")
        if subprocess.call([str(python or venv_python()), str(script), str(out)]) != 0:
            fail("generating the demo model failed", "see the Python traceback above")
    return out

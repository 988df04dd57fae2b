# SPDX-License-Identifier: MIT
"""Building ncnn as a static library for a profile, cached by version and options."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from ci.common import PINS, Models, Settings, cache_root, cmake_text, fail, key_of, locked, mark_used, profile, prune_cache, run, say
from ci.sources import ensure_debian_packages, ncnn_source


def _compiler_id(prof: Settings) -> str:
    cc = prof.get("cc", "cc")
    try:
        return subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    except FileNotFoundError:
        fail(f"no C compiler '{cc}'", "install build-essential (or the profile's cross toolchain)")


def check_prefix(prefix: Path, origin: str) -> Path:
    lib = prefix / "lib" / "libncnn.a"
    hdr = prefix / "include" / "ncnn" / "c_api.h"
    if not lib.exists() or not hdr.exists():
        fail(f"{origin} {prefix} is not an ncnn install prefix",
             "it must hold lib/libncnn.a and include/ncnn/c_api.h (cmake --install of ncnn)")
    return prefix


def _only_layers(keep: list[str]) -> list[str]:
    """-DWITH_LAYER_<name>=ON for the layers kept and =OFF for every other layer ncnn has
    (the list read from ncnn's own src/CMakeLists.txt, so a new release's layers are covered)."""
    text = (ncnn_source() / "src" / "CMakeLists.txt").read_text()
    known = re.findall(r"^ncnn_add_layer\((\w+)", text, re.M)
    unknown = sorted(set(keep) - set(known))
    if unknown:
        fail(f"ncnn_layers names layers ncnn {PINS['ncnn']['version']} does not have: {', '.join(unknown)}",
             "fix the list in ci/profiles.toml")
    # ncnn's option is named after the lower-cased class (cmake/ncnn_add_layer.cmake).
    return [f"-DWITH_LAYER_{name.lower()}={'ON' if name in keep else 'OFF'}" for name in known]


def cmake_options(profile_name: str, models: Models = ()) -> list[str]:
    """ncnn's CMake options for a profile, the toolchain file aside (the ESP32 build in
    docs/boards.md reuses the MCU profile's with its own toolchain: `make ncnn-options`)."""
    prof = profile(profile_name, models)
    # ncnn's CMakeLists stamps today's date as the version unless told the release's.
    options = [f"-DNCNN_VERSION={PINS['ncnn']['version'].rsplit('.', 1)[-1]}", *prof["ncnn_options"]]
    if "ncnn_layers" in prof:
        options += _only_layers(prof["ncnn_layers"])
    return options


def ncnn_prefix(profile_name: str, build: bool = True, models: Models = ()) -> Path:
    """The install prefix of ncnn for this profile: $NCNN_DIR if set, else built into
    the cache (with build=False, only where it would be)."""
    override = os.environ.get("NCNN_DIR")
    if override:
        return check_prefix(Path(override).resolve(), "NCNN_DIR=")
    prof = profile(profile_name, models)
    if build and "debian_packages" in prof:  # a cross toolchain
        ensure_debian_packages(prof["debian_packages"])
    options = cmake_options(profile_name, models)
    toolchain = prof.get("ncnn_toolchain")
    if toolchain:
        options.append(f"-DCMAKE_TOOLCHAIN_FILE={Path(__file__).parent / toolchain}")
    if prof.get("libc_from_source"):  # (its headers: the windowed core's picolibc, ci/picolibc.py)
        from ci.picolibc import picolibc

        options.append(f"-DNCNN_MP_LIBC_DIR={picolibc(build=build)}")
    # Keyed by contents, not by where this checkout lies (a second checkout, CI's fresh clone):
    # the toolchain file by its name and text, with the compiler driver and headers beside it.
    key_options = [f"-DCMAKE_TOOLCHAIN_FILE={toolchain}" if o.startswith("-DCMAKE_TOOLCHAIN_FILE=") else o
                   for o in options]
    key = key_of(PINS["ncnn"]["version"], key_options, _compiler_id(prof),
                 _toolchain_text(toolchain) if toolchain else "")
    # Keyed by what changes the library, not by profile name: profiles sharing ncnn options share the build.
    root = cache_root() / "ncnn" / f"{PINS['ncnn']['version']}-{key}"
    prefix = root / "install"
    if not build:
        return prefix
    with locked(root.parent / f"{root.name}.lock", f"ncnn for '{profile_name}'"):
        if not (root / ".done").exists():
            _build(profile_name, root, options)
        mark_used(root)
    prune_cache(root.parent.iterdir(), keep=root)
    return check_prefix(prefix, "built ncnn")


def _toolchain_text(toolchain: str) -> str:
    """A toolchain file's text with the files it includes (ci/board.common.cmake), and that of its
    folder's bin/ and include/ (the esp32core board's compiler driver and headers, which shape
    every object of ncnn's)."""
    path = Path(__file__).parent / toolchain
    parts = [cmake_text(path)]
    for sub in ("bin", "include"):
        folder = path.parent / sub
        for f in sorted(folder.rglob("*")) if folder.is_dir() else []:
            if f.is_file():
                parts.append(f"{f.relative_to(path.parent)}\n{f.read_text()}")
    return "\n".join(parts)


def _build(profile_name: str, root: Path, options: list[str]) -> None:
    src = ncnn_source()
    build = root / "build"
    prefix = root / "install"
    shutil.rmtree(root, ignore_errors=True)
    build.mkdir(parents=True)
    logs = cache_root() / "logs"
    say(f"configuring ncnn {PINS['ncnn']['version']} for profile '{profile_name}' (cache: {root})")
    run(["cmake", "-S", src, "-B", build, f"-DCMAKE_INSTALL_PREFIX={prefix}", *options],
        "configuring ncnn with cmake failed", "install cmake and a C++ compiler (build-essential)",
        log=logs / f"ncnn-{profile_name}-configure.log")
    jobs = str(os.cpu_count() or 2)
    say(f"building ncnn with {jobs} jobs (about 18 minutes on 2 cores for the full desktop build; cached after)")
    run(["cmake", "--build", build, "-j", jobs], "building ncnn failed",
        "see the log; a compiler error here usually means a missing toolchain package",
        log=logs / f"ncnn-{profile_name}-build.log", progress=r"^\[\s*\d+%\]")
    run(["cmake", "--install", build], "installing ncnn into the cache failed", "see the log",
        log=logs / f"ncnn-{profile_name}-install.log")
    shutil.rmtree(build)  # the objects are ~1 GB; only the installed library is kept
    (root / ".done").touch()

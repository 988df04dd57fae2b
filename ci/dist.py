# SPDX-License-Identifier: MIT
"""`make dist`: the files a user can take without building, versioned, with checksums and a manifest.

dist/ncnn_mp-<version>/ (the version: pyproject.toml's [project]) holds

    firmware/unix/micropython          the Unix firmware (x86_64 Linux)
    firmware/unix-kernels/micropython  the same with ncnn_mp's kernels (the boards' arithmetic, int8
                                       between layers: what `ncnn-mp model` checks an int8 model on)
    firmware/<board>/firmware.elf      the QEMU boards' firmwares (qemu, qemu-m4f, rv32, xtensa),
                                       as ncnn_mp_tools/qemu.py runs them (-kernel), ncnn_mp_lib frozen in
    tools/ncnn_mp_tools-<version>-py3-none-any.whl   the desktop tools: pip install it, then `ncnn-mp`
                                       (which reads this folder's manifest: --dist FOLDER --board NAME)
    python/                            ncnn_mp_lib: sources, package.json, .mpy per architecture,
                                       mip indexes (ci/package.py)
    manifest.json                      what each file is: profile, ncnn version and options,
                                       layers kept, build_info(), MicroPython, .mpy version/arch
    licenses/                          LICENSE, THIRD_PARTY_NOTICES.md, and ncnn's and MicroPython's
                                       licences as their pinned sources have them
    SHA256SUMS                         `sha256sum -c SHA256SUMS` checks every other file
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ci.common import BUILD, PINS, REPO, fail, profile, say, sha256_of
from ci.package import firmware_mpy, loads, version, write_python

DIST = REPO / "dist"
# The firmwares a user takes: the Unix port's and the boards the README presents.
PROFILES = ("unix", "unix-kernels", "qemu", "qemu-m4f", "rv32", "xtensa")
# What a firmware is asked when it is packed: its ncnn's switches and the .mpy it loads.
PROBE = "import ncnn_mp, sys\nprint(repr(ncnn_mp.build_info()))\nprint(sys.implementation._mpy)\n"


def probe(name: str, fw: Path) -> tuple[dict[str, bool], int]:
    """build_info() and sys.implementation._mpy, asked of the firmware itself."""
    prof = profile(name)
    if prof["port"] == "unix":
        p = subprocess.run([str(fw), "-c", PROBE], capture_output=True, text=True, timeout=60)
        out, ok = p.stdout, p.returncode == 0
    else:
        from ci import qemu

        r = qemu.run_script(name, fw, PROBE.encode(), timeout=120)
        out, ok = r.output, r.returncode == 0
    lines = out.strip().splitlines()
    if not ok or len(lines) < 2:
        fail(f"the {name} firmware did not answer what it was built with", f"it printed: {out.strip()[-300:]!r}")
    return ast.literal_eval(lines[-2]), int(lines[-1])


def firmware_info(name: str, fw: Path) -> dict[str, Any]:
    from ci.ncnn_build import cmake_options

    prof = profile(name)
    switches, mpy = probe(name, fw)
    info: dict[str, Any] = {
        "kind": "firmware", "profile": name, "port": prof["port"],
        "micropython": PINS["micropython"]["version"], "ncnn": PINS["ncnn"]["version"],
        "ncnn_options": cmake_options(name),
        "ncnn_layers": prof.get("ncnn_layers", "all"),
        "build_info": switches, "make_vars": prof.get("make_vars", []),
        "frozen": prof.get("frozen", []), **firmware_mpy(mpy),
    }
    if "qemu_system" in prof:  # (how ncnn_mp_tools/qemu.py's Board.of runs it)
        info["qemu"] = [prof["qemu_system"], *prof["qemu_args"]]
        info["board"] = {k: prof[k] for k in ("qemu_system", "qemu_args", "qemu_console", "qemu_icount", "romfs_address")
                         if k in prof}
    if "ncnn_arch" in prof:  # (the layer code its ncnn has: what ncnn_mp_tools/layers.py's table is read for)
        info["ncnn_arch"] = prof["ncnn_arch"]
    if "mpy_arch" in prof and not loads(info["arch"], prof["mpy_arch"]):
        fail(f"profile {name}'s mpy_arch is {prof['mpy_arch']}, which its firmware ({info['arch']}) does not load",
             "correct mpy_arch in ci/profiles.toml")
    return info


# What the tools' wheel is built from (pyproject.toml's [project] and [tool.setuptools] say what goes in).
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "THIRD_PARTY_NOTICES.md", "ncnn_mp_tools")


def tools_wheel(folder: Path, v: str) -> tuple[Path, dict[str, Any]]:
    """ncnn_mp_tools as a wheel, built by setuptools (the venv's, pinned) from a copy of what it is
    made of (nothing written into the checkout), its files' times fixed (SOURCE_DATE_EPOCH)."""
    import tempfile
    import zipfile

    from ci.common import run
    from ci.testenv import venv_python

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for name in WHEEL_SOURCES:
            if (REPO / name).is_dir():
                shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(REPO / name, src / name)
        run([venv_python(), "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", folder, src],
            "building the tools' wheel failed", "see the log", log=BUILD / "wheel.log",
            env=dict(os.environ, SOURCE_DATE_EPOCH="315532800"))
    (wheel,) = folder.glob(f"ncnn_mp_tools-{v}-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    return wheel, {"kind": "tools", "version": v, "files": len(names),
                   "command": "ncnn-mp", "install": f"pip install {wheel.name}"}


def licence_files() -> dict[str, tuple[str, Path]]:
    """What licenses/ holds, by name: what each file is the licence of, and where it is copied from.
    The full texts of what every firmware links come from the pinned sources it is built from
    (not retyped; a MICROPYTHON_DIR gives its own)."""
    from ci.sources import micropython_source, ncnn_source

    return {"LICENSE": ("ncnn_mp", REPO / "LICENSE"),
            "THIRD_PARTY_NOTICES.md": ("ncnn_mp's third-party components", REPO / "THIRD_PARTY_NOTICES.md"),
            "ncnn-LICENSE.txt": (f"ncnn {PINS['ncnn']['version']}", ncnn_source() / "LICENSE.txt"),
            "micropython-LICENSE": (f"MicroPython {PINS['micropython']['version']}", micropython_source() / "LICENSE")}


def write_licences(dest: Path) -> dict[str, dict[str, Any]]:
    """Copy licence_files() into `dest`; each one's manifest entry, by name."""
    dest.mkdir(parents=True, exist_ok=True)
    files = {}
    for name, (of, src) in licence_files().items():
        if not src.is_file() or src.stat().st_size == 0:
            fail(f"{src} is missing or empty: make dist ships it in licenses/",
                 "restore it (git checkout; for a cached source, remove it from the cache to fetch it again)")
        shutil.copyfile(src, dest / name)
        files[name] = {"kind": "licence", "of": of}
    return files


def write_dist(firmwares: dict[str, Path] | None = None, root: Path | None = None) -> Path:
    """Write dist/ncnn_mp-<version>/; `firmwares` (profile -> built firmware) spares building
    those (the tests pass theirs); the others are built (or brought up to date)."""
    from ci.firmware import build_firmware, mpy_cross

    v = version()
    root = root or DIST
    if root.exists() and not root.is_dir():
        fail(f"DIST={root} is a file", "give a folder (make dist DIST=folder), or leave DIST out for dist/")
    out = root / f"ncnn_mp-{v}"
    say(f"writing {out}")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    files: dict[str, dict[str, Any]] = {}
    for name in PROFILES:
        fw = (firmwares or {}).get(name) or build_firmware(name)
        dest = out / "firmware" / name / fw.name
        dest.parent.mkdir(parents=True)
        shutil.copy2(fw, dest)
        files[str(dest.relative_to(out))] = firmware_info(name, fw)
    tools, info = tools_wheel(out / "tools", v)
    files[str(tools.relative_to(out))] = info
    archs = sorted({str(profile(name)["mpy_arch"]) for name in PROFILES})
    for path, info in write_python(out / "python", archs, mpy_cross()).items():
        files[f"python/{path}"] = info
    for name, info in write_licences(out / "licenses").items():
        files[f"licenses/{name}"] = info
    for path, info in files.items():
        info["size"] = (out / path).stat().st_size
        info["sha256"] = sha256_of(out / path)
    manifest = {"name": "ncnn_mp", "version": v, "micropython": PINS["micropython"]["version"],
                "ncnn": PINS["ncnn"]["version"], "files": dict(sorted(files.items()))}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    listed = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.name != "SHA256SUMS")
    (out / "SHA256SUMS").write_text("".join(f"{sha256_of(out / p)}  {p}\n" for p in listed))
    say(f"{len(listed)} files, {sum((out / p).stat().st_size for p in listed) / 1e6:.1f} MB: {out}")
    return out

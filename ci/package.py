# SPDX-License-Identifier: MIT
"""ncnn_mp_lib as MicroPython installs it: package.json, .mpy files per architecture, a mip index.

One function, write_python(), writes the package for `make dist` and for the tests that install
it with mpremote's mip through the Unix firmware (tests/test_dist.py), into a folder laid out as:

    ncnn_mp_lib/*.py                  the sources
    package.json                      mip's URL form: mip.install("http://HOST/.../package.json")
    mpy/<arch>/ncnn_mp_lib/*.mpy      compiled by the pinned mpy-cross with -march=<arch>
    mpy/<arch>/package.json           the URL form for those .mpy files
    mip/<arch>/                       an index for mip.install("ncnn_mp_lib", index="http://HOST/.../mip/<arch>"):
        package/<mpy version>/ncnn_mp_lib/{latest,<version>}.json   the .mpy files (mip's default)
        package/py/ncnn_mp_lib/{latest,<version>}.json              the sources (mip.install(..., mpy=False))
        file/<hash[:2]>/<hash>                                      every file, by its short sha256

mip (micropython-lib's on a board, `mpremote mip install` from a PC: one protocol) asks an index
for `package/<sys.implementation._mpy & 0xff>/<name>/<version>.json`, whose "hashes" name files
under `file/`; the .mpy version says nothing of the architecture, and ncnn_mp_lib's viper scans
(ncnn_mp_lib/detection.py) compile to native code, so each architecture gets an index of its own.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

from ci.common import REPO, fail, run

NAME = "ncnn_mp_lib"
PACKAGE = REPO / NAME
HASH_LENGTH = 8  # micropython-lib's index names files by the first 8 hex digits of their sha256

# MicroPython's native architectures, by the number an .mpy header and sys.implementation._mpy
# carry (py/persistentcode.h's MP_NATIVE_ARCH_*), named as mpy-cross's -march takes them.
ARCHS = ("none", "x86", "x64", "armv6", "armv6m", "armv7m", "armv7em", "armv7emsp", "armv7emdp",
         "xtensa", "xtensawin", "rv32imc")


def version() -> str:
    """ncnn_mp's version: pyproject.toml's [project] version, the one place it is written."""
    with open(REPO / "pyproject.toml", "rb") as f:
        v = tomllib.load(f).get("project", {}).get("version")
    if not isinstance(v, str) or not v:
        fail("pyproject.toml has no [project] version", 'add one, e.g. version = "0.1.0"')
    return v


def sources() -> list[Path]:
    return sorted(PACKAGE.glob("*.py"))


def mpy_header(data: bytes) -> dict[str, Any]:
    """What an .mpy file's 4-byte header says: its version, sub-version and native architecture
    ("none": bytecode only, which every firmware of the version loads)."""
    if len(data) < 4 or data[0] != ord("M"):
        raise ValueError("not an .mpy file (it does not start with 'M')")
    return {"mpy_version": data[1], "mpy_sub_version": data[2] & 3, "arch": ARCHS[data[2] >> 2],
            "small_int_bits": data[3]}


def firmware_mpy(mpy: int) -> dict[str, Any]:
    """What a firmware's sys.implementation._mpy says it loads: the same fields."""
    flags = mpy >> 8
    return {"mpy_version": mpy & 0xFF, "mpy_sub_version": flags & 3, "arch": ARCHS[flags >> 2]}


def loads(firmware_arch: str, arch: str) -> bool:
    """Does a firmware reporting `firmware_arch` (sys.implementation._mpy) load native code for
    `arch`? A Thumb-2 firmware reports armv7em (or the -sp/-dp of its FPU: a Cortex-M3 too)
    and loads every ARM M-profile arch up to it (py/persistentcode.h's MPY_FEATURE_ARCH_TEST);
    the others load their own."""
    m_profile = ARCHS.index("armv6m"), ARCHS.index("armv7emdp")
    if m_profile[0] <= ARCHS.index(firmware_arch) <= m_profile[1]:
        return m_profile[0] <= ARCHS.index(arch) <= ARCHS.index(firmware_arch)
    return arch == firmware_arch


def compile_mpy(mpy_cross: Path, arch: str, out: Path) -> list[Path]:
    """Every source compiled to out/ncnn_mp_lib/*.mpy with -march=arch."""
    if arch not in ARCHS[1:]:
        fail(f"unknown .mpy architecture '{arch}'", f"choose one of: {', '.join(ARCHS[1:])}")
    folder = out / NAME
    folder.mkdir(parents=True, exist_ok=True)
    done = []
    for src in sources():
        dest = folder / (src.stem + ".mpy")
        run([mpy_cross, f"-march={arch}", "-s", f"{NAME}/{src.name}", "-o", dest, src],
            f"mpy-cross -march={arch} failed on {src.relative_to(REPO)}", "see the error above")
        done.append(dest)
    return done


def short_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:HASH_LENGTH]


def package_json(targets: list[str], v: str, base: str = "") -> dict[str, Any]:
    """mip's URL form: each file by a URL relative to the package.json (mip 0.4 and mpremote take
    those); `base`: the part of each target the package.json's own folder is (its files beside it)."""
    return {"urls": [[t, t.removeprefix(base)] for t in targets], "deps": [], "version": v}


# ncnn_mp_lib/package.json, committed beside the package's files: what mip's github: form reads
# (`mpremote mip install github:OWNER/REPO/ncnn_mp_lib`), each file by its name beside it.
COMMITTED = PACKAGE / "package.json"


def committed_package_json() -> str:
    """COMMITTED as it must read (tests/test_dist.py checks it; `python3 -m ci.package` writes it)."""
    targets = [f"{NAME}/{src.name}" for src in sources()]
    return json.dumps(package_json(targets, version(), base=f"{NAME}/"), indent=1) + "\n"


def write_index(root: Path, files: dict[str, bytes], mpy_version: str, v: str) -> None:
    """A mip index under `root` for `files` (target path -> contents), for firmwares asking with
    `mpy_version` ("6", or "py" for sources)."""
    hashes = []
    for target, data in files.items():
        h = short_hash(data)
        path = root / "file" / h[:2] / h
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        hashes.append([target, h])
    index = json.dumps({"hashes": hashes, "deps": [], "version": v}, indent=1) + "\n"
    folder = root / "package" / mpy_version / NAME
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("latest", v):
        (folder / f"{name}.json").write_text(index)


def write_python(out: Path, archs: list[str], mpy_cross: Path) -> dict[str, dict[str, Any]]:
    """The package laid out as above under `out` (emptied first); returns what each file is,
    by its path under `out` (for make dist's manifest)."""
    v = version()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    info: dict[str, dict[str, Any]] = {}
    targets = []
    for src in sources():
        target = f"{NAME}/{src.name}"
        (out / NAME).mkdir(exist_ok=True)
        shutil.copyfile(src, out / target)
        targets.append(target)
        info[target] = {"kind": "python source", "package": NAME, "version": v}
    (out / "package.json").write_text(json.dumps(package_json(targets, v), indent=1) + "\n")
    info["package.json"] = {"kind": "mip package.json (URL form, sources)", "package": NAME, "version": v}
    sources_by_target = {t: (out / t).read_bytes() for t in targets}
    for arch in archs:
        compiled = compile_mpy(mpy_cross, arch, out / "mpy" / arch)
        mpy_targets = [f"{NAME}/{p.name}" for p in compiled]
        (out / "mpy" / arch / "package.json").write_text(json.dumps(package_json(mpy_targets, v), indent=1) + "\n")
        info[f"mpy/{arch}/package.json"] = {"kind": "mip package.json (URL form, .mpy)", "package": NAME,
                                            "version": v, "for_arch": arch}
        for p in compiled:
            info[f"mpy/{arch}/{NAME}/{p.name}"] = {"kind": "mpy", "package": NAME, "version": v, "for_arch": arch,
                                                  **mpy_header(p.read_bytes())}
        mpy_files = {t: (out / "mpy" / arch / t).read_bytes() for t in mpy_targets}
        versions = {mpy_header(d)["mpy_version"] for d in mpy_files.values()}
        assert len(versions) == 1, versions  # (one mpy-cross: one version)
        index = out / "mip" / arch
        write_index(index, mpy_files, str(versions.pop()), v)
        write_index(index, sources_by_target, "py", v)
        for path in sorted(index.rglob("*")):
            if path.is_file():
                info[str(path.relative_to(out))] = {"kind": "mip index", "package": NAME, "version": v,
                                                    "for_arch": arch}
    return info


if __name__ == "__main__":
    COMMITTED.write_text(committed_package_json())
    print(COMMITTED)

"""Building a MicroPython firmware with ncnn_mp built in, for a profile."""

from __future__ import annotations

import os
from pathlib import Path

from common import BUILD, REPO, key_of, locked, profile, run, say
from ncnn_build import ncnn_prefix
from sources import micropython_source


def _usermods_dir() -> Path:
    """A folder whose only module is this checkout: make-based ports take every
    */micropython.mk under USER_C_MODULES, and the checkout's own parent may hold others."""
    d = BUILD / "usermods"
    d.mkdir(parents=True, exist_ok=True)
    link = d / "ncnn_mp"
    if not link.is_symlink() or link.resolve() != REPO:
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(REPO)
    return d


def _firmware_dir(profile_name: str, mp: Path, ncnn: Path | None) -> Path:
    # make does not notice changed flags: a change of make variables gets a fresh build folder.
    return BUILD / f"{profile_name}-{key_of(str(mp), str(ncnn), profile(profile_name).get('make_vars', []))}"


def _ncnn_for(profile_name: str, build: bool) -> Path | None:
    """The ncnn the profile links, or None for a firmware without ncnn_mp (a size baseline)."""
    return ncnn_prefix(profile_name, build=build) if profile(profile_name).get("with_ncnn_mp", True) else None


def firmware_path(profile_name: str = "unix") -> Path:
    prof = profile(profile_name)
    mp, ncnn = micropython_source(), _ncnn_for(profile_name, build=False)
    return _firmware_dir(profile_name, mp, ncnn) / "build" / prof.get("firmware", "micropython")


def build_firmware(profile_name: str = "unix") -> Path:
    """Build (or bring up to date) the firmware; return the binary's path."""
    prof = profile(profile_name)
    mp, ncnn = micropython_source(), _ncnn_for(profile_name, build=True)
    out = _firmware_dir(profile_name, mp, ncnn)
    module = [f"USER_C_MODULES={_usermods_dir()}", f"NCNN_DIR={ncnn}",
              f"NCNN_MP_LIBS={' '.join(prof['link_libs'])}"] if ncnn else []
    port = mp / "ports" / prof["port"]
    say(f"building MicroPython {prof['port']} firmware with ncnn_mp (about 40 s cold, seconds warm)")
    jobs = str(os.cpu_count() or 2)
    with locked(out / "build.lock", "this firmware"):
        run(["make", "-C", port, "-j", jobs, f"BUILD={out / 'build'}", *module, *prof.get("make_vars", [])],
            "building the firmware failed",
            "see the log (a C error in ncnn_mp/ shows there with file and line)",
            log=out / "build.log", progress=r"^(CC \S*ncnn_mp|LINK) .*")
    binary = firmware_path(profile_name)
    say(f"firmware: {binary}")
    return binary

# SPDX-License-Identifier: MIT
"""Building a MicroPython firmware with ncnn_mp built in, for a profile."""

from __future__ import annotations

import os
from pathlib import Path

from ci.common import BUILD, REPO, SHARED_MODELS, Models, Settings, is_board, key_of, locked, profile, run, say
from ci.ncnn_build import ncnn_prefix
from ci.sources import ensure_debian_packages, micropython_source
from ncnn_mp_tools.target import Target


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


def _runtime_vars(prof: Settings) -> list[str]:
    """The make variables naming the C runtime built from source for a board (built, or cached)."""
    found = []
    if prof.get("libgcc_from_source"):  # libgcc's Xtensa routines: what lx106's lacks, esp32core's all
        from ci.xtensa_libgcc import archive

        found.append(f"LIBGCC_EXTRA={archive(prof['libgcc_from_source'])}")
    if prof.get("libc_from_source"):  # the windowed core's C library (Debian's is call0)
        from ci.picolibc import picolibc

        found.append(f"LIBC_DIR={picolibc()}")
    return found


def _firmware_dir(profile_name: str, mp: Path, ncnn: Path | None, models: Models) -> Path:
    # make does not notice changed flags: a change of make variables gets a fresh build folder.
    prof = profile(profile_name, models)
    port = [prof["port_dir"]] if "port_dir" in prof else []  # (the other boards' keys stay as they were)
    # (a C library built here is in it too, where the board has one: its headers are in every object)
    libc = []
    if prof.get("libc_from_source"):
        from ci.picolibc import picolibc

        libc.append(str(picolibc(build=False)))
    key = key_of(str(mp), str(ncnn), prof.get("make_vars", []), prof.get("frozen", []), *port, *libc)
    return BUILD / f"{profile_name}-{key}"


def _ncnn_for(profile_name: str, build: bool, models: Models) -> Path | None:
    """The ncnn the profile links, or None for a firmware without ncnn_mp (a size baseline)."""
    with_ncnn = profile(profile_name, models).get("with_ncnn_mp", True)
    return ncnn_prefix(profile_name, build=build, models=models) if with_ncnn else None


def firmware_path(profile_name: str = "unix", models: Models = ()) -> Path:
    prof = profile(profile_name, models)
    mp, ncnn = micropython_source(), _ncnn_for(profile_name, False, models)
    return _firmware_dir(profile_name, mp, ncnn, models) / "build" / str(prof.get("firmware", "micropython"))


def target(profile_name: str = "unix", models: Models = (), build: bool = True) -> Target:
    """The profile's firmware as the tools take it (ncnn_mp_tools/target.py): built (build=False:
    where it would be), sized to `models` if given."""
    from ncnn_mp_tools.qemu import Board
    from ncnn_mp_tools.target import HOST_ARCH

    prof = profile(profile_name, models)
    fw = build_firmware(profile_name, models) if build else firmware_path(profile_name, models)
    options = [o for o in prof.get("ncnn_options", []) if o.startswith("-DNCNN_STRING=")]
    names = not (options and options[-1].endswith("OFF"))  # (the last one given wins, as in CMake)
    kernels = any(v.endswith("NCNN_MP_KERNELS=1") for v in prof.get("make_vars", []))
    what = (f"the '{profile_name}' firmware sized to the models (make firmware PROFILE={profile_name} "
            f"MODELS=\"{' '.join(map(str, models))}\")") if models else ""
    return Target(profile_name, fw, Board.of(prof) if is_board(prof) else None, names, kernels,
                  prof.get("ncnn_arch", HOST_ARCH), frozenset(prof["ncnn_layers"]) if "ncnn_layers" in prof else None,
                  what)


def _frozen_manifest(prof: Settings, out: Path) -> list[str]:
    """A board without a filesystem gets its Python helpers frozen into the firmware (the
    profile's `frozen` modules; a folder is a package: ncnn_mp_lib), and the files its test
    scripts read (models, images) in a ROMFS image, build/romfs.img, which ci/qemu.py loads into
    the board's flash region and the board mounts at /rom (ci/mcu/board.c): data aligned, so
    weights load in place."""
    if "frozen" not in prof:
        return []
    from ci.testenv import digits_model
    from ncnn_mp_tools.romfs_pack import pack

    files: dict[str, bytes] = {}
    digits = digits_model()
    for name in ["digits.param", "digits.param.bin", "digits.bin", "digits_test.bin"]:
        files[name] = (digits / name).read_bytes()
    mnist = SHARED_MODELS / "mnist"
    if mnist.is_dir():  # the team's MNIST model, when this machine has it
        for path in sorted(mnist.glob("mnist.*")) + sorted(mnist.glob("*.pgm")):
            files[path.name] = path.read_bytes()
    (out / "build").mkdir(parents=True, exist_ok=True)
    image = pack(files)
    if not (out / "build" / "romfs.img").exists() or (out / "build" / "romfs.img").read_bytes() != image:
        (out / "build" / "romfs.img").write_bytes(image)
    lines = [f"{'package' if p.is_dir() else 'module'}({p.name!r}, base_path={str(p.parent)!r})"
             for p in (REPO / f for f in prof["frozen"])]
    manifest = out / "manifest.py"
    manifest.write_text("# Generated by ci/firmware.py from ci/profiles.toml's `frozen`.\n" + "\n".join(lines) + "\n")
    # MicroPython refuses to freeze without micropython-lib (a submodule Debian's source
    # leaves out), though this manifest requires nothing from it: point at a stand-in.
    no_lib = BUILD / "no-micropython-lib"
    no_lib.mkdir(parents=True, exist_ok=True)
    (no_lib / "README.md").write_text("Stand-in for micropython-lib: ncnn_mp's manifests use none of it.\n")
    return [f"FROZEN_MANIFEST={manifest}", f"MPY_LIB_DIR={no_lib}"]


def mpy_cross(mp: Path | None = None) -> Path:
    """MicroPython's cross-compiler, which freezing modules needs (and make dist's .mpy files).
    Built on its own: made by the port's make, it would inherit the port's BUILD= and put host
    objects there."""
    mp = mp or micropython_source()
    out = BUILD / "mpy-cross"
    with locked(BUILD / "mpy-cross.lock", "mpy-cross"):
        run(["make", "-C", mp / "mpy-cross", f"BUILD={out}"], "building mpy-cross failed",
            "see the log", log=BUILD / "mpy-cross.log")
    return out / "mpy-cross"


def build_firmware(profile_name: str = "unix", models: Models = ()) -> Path:
    """Build (or bring up to date) the firmware (sized to `models`: make's MODELS=...); return the
    binary's path."""
    prof = profile(profile_name, models)
    if "debian_packages" in prof:
        ensure_debian_packages(prof["debian_packages"])
    mp, ncnn = micropython_source(), _ncnn_for(profile_name, True, models)
    out = _firmware_dir(profile_name, mp, ncnn, models)
    module = [f"USER_C_MODULES={_usermods_dir()}", f"NCNN_DIR={ncnn}",
              f"NCNN_MP_LIBS={' '.join(prof['link_libs'])}"] if ncnn else []
    if ncnn and "ncnn_layers" in prof:  # (only these layers' kernels: kernels.h)
        module.append(f"NCNN_MP_LAYERS={' '.join(prof['ncnn_layers'])}")
    make_vars = [v.replace("{repo}", str(REPO)) for v in prof.get("make_vars", [])]
    port = mp / "ports" / prof["port"]
    if "port_dir" in prof:  # a port kept in this checkout (the Xtensa sim board's: ports/qemu has none)
        port = REPO / prof["port_dir"]
        make_vars.append(f"MICROPY_TOP={mp}")
    make_vars += _runtime_vars(prof)
    what = "with ncnn_mp" if ncnn else "without ncnn_mp"
    say(f"building MicroPython's {prof['port']} firmware {what} (about 40 s cold, seconds warm)")
    jobs = str(os.cpu_count() or 2)
    with locked(out / "build.lock", "this firmware"):
        frozen = _frozen_manifest(prof, out)
        if frozen:
            frozen.append(f"MICROPY_MPYCROSS={mpy_cross(mp)}")
        run(["make", "-C", port, "-j", jobs, f"BUILD={out / 'build'}", *module, *make_vars, *frozen],
            "building the firmware failed",
            "see the log (a C error in ncnn_mp/ shows there with file and line)",
            log=out / "build.log", progress=r"^(CC \S*ncnn_mp|LINK|GEN \S*frozen) .*")
    binary = firmware_path(profile_name, models)
    say(f"firmware: {binary}")
    return binary

# SPDX-License-Identifier: MIT
"""micropython.mk and micropython.cmake name the same sources and include folders, and the CMake file
works as ports use it; the two MCU boards' profiles build the same ncnn."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from conftest import REPO


def mk_sources() -> list[str]:
    text = (REPO / "micropython.mk").read_text()
    return re.findall(r"\$\(NCNN_MP_DIR\)/(ncnn_mp/\S+\.(?:c|cpp))\b", text)


def cmake_sources() -> list[str]:
    text = (REPO / "micropython.cmake").read_text()
    return re.findall(r"\$\{CMAKE_CURRENT_LIST_DIR\}/(ncnn_mp/\S+\.(?:c|cpp))$", text, re.M)


# ncnn_mp's parts, one folder each (docs/internals.md#the-files-from-the-bottom-up).
PARTS = ["binding", "seam", "guard", "kernels"]


def test_mk_and_cmake_list_the_same_sources() -> None:
    on_disk = sorted(str(p.relative_to(REPO)) for p in (REPO / "ncnn_mp").rglob("*.c*"))
    assert sorted(mk_sources()) == on_disk
    assert sorted(cmake_sources()) == on_disk
    # Every source and header lies in one of the parts' folders, and nothing else does.
    assert sorted(p.name for p in (REPO / "ncnn_mp").iterdir()) == sorted(PARTS)


def test_mk_and_cmake_include_every_part_and_headers_by_name() -> None:
    """The include rule (micropython.mk): the parts' folders on the include path, in both
    build files, and each #include of ncnn_mp's own headers by the header's name alone."""
    mk = (REPO / "micropython.mk").read_text()
    (mk_parts,) = re.findall(r"^NCNN_MP_INC := \$\(addprefix -I\$\(NCNN_MP_DIR\)/ncnn_mp/,([\w ]+)\)", mk, re.M)
    (cmake_parts,) = re.findall(r"^foreach\(part ([\w ]+)\)", (REPO / "micropython.cmake").read_text(), re.M)
    assert mk_parts.split() == PARTS and cmake_parts.split() == PARTS
    headers = {p.name for p in (REPO / "ncnn_mp").rglob("*.h")}
    for path in (REPO / "ncnn_mp").rglob("*.[ch]*"):
        for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', path.read_text(), re.M):
            if name.rsplit("/", 1)[-1] in headers:
                assert "/" not in name, (path.name, name)


def configure_usermod(tmp_path: Path, *cmake_args: str) -> dict[str, str]:
    """Configure a CMake project that includes MicroPython's py/usermod.cmake the way
    CMake ports (esp32, rp2) do, and report what the usermod target gathered."""
    from ci.sources import micropython_source

    mp = micropython_source()
    (tmp_path / "CMakeLists.txt").write_text(f"""
cmake_minimum_required(VERSION 3.12)
project(usermod_probe C CXX)
include({mp}/py/usermod.cmake)
get_target_property(links usermod_ncnn_mp INTERFACE_LINK_LIBRARIES)
file(WRITE ${{CMAKE_BINARY_DIR}}/probe.txt
  "sources=${{MICROPY_SOURCE_USERMOD}}\\nincludes=${{MICROPY_INC_USERMOD}}\\nlinks=${{links}}\\n")
""")
    build = tmp_path / "build"
    p = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(build),
                        f"-DUSER_C_MODULES={REPO / 'micropython.cmake'}", *cmake_args],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Found User C Module(s): usermod_ncnn_mp" in p.stdout + p.stderr
    return dict(line.split("=", 1) for line in (build / "probe.txt").read_text().splitlines())


@pytest.fixture(scope="module")
def ncnn_prefix() -> Path:
    from ci.ncnn_build import ncnn_prefix

    return ncnn_prefix("unix")


def test_cmake_usermod_with_ncnn_dir(tmp_path: Path, ncnn_prefix: Path) -> None:
    probe = configure_usermod(tmp_path, f"-DNCNN_DIR={ncnn_prefix}")
    assert sorted(probe["sources"].split(";")) == sorted(str(REPO / s) for s in cmake_sources())
    includes = probe["includes"].split(";")
    assert all(str(REPO / "ncnn_mp" / part) in includes for part in PARTS)
    assert str(ncnn_prefix / "include") in includes
    assert str(ncnn_prefix / "lib" / "libncnn.a") in probe["links"].split(";")


def test_cmake_usermod_with_find_package(tmp_path: Path, ncnn_prefix: Path) -> None:
    probe = configure_usermod(tmp_path, f"-DCMAKE_PREFIX_PATH={ncnn_prefix}")
    assert "ncnn" in probe["links"].split(";")
    assert str(ncnn_prefix / "include") in probe["includes"].split(";")


def test_cmake_usermod_rejects_a_wrong_ncnn_dir(tmp_path: Path) -> None:
    from ci.sources import micropython_source

    (tmp_path / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.12)\nproject(p C)\ninclude({micropython_source()}/py/usermod.cmake)\n")
    p = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "b"),
                        f"-DUSER_C_MODULES={REPO / 'micropython.cmake'}", f"-DNCNN_DIR={tmp_path}"],
                       capture_output=True, text=True)
    assert p.returncode != 0
    said = " ".join((p.stdout + p.stderr).split())  # CMake wraps long messages
    assert f"ncnn_mp: NCNN_DIR={tmp_path} holds no include/ncnn/c_api.h" in said


def test_both_boards_build_the_same_ncnn() -> None:
    """The RISC-V profiles are the Cortex-M ones on another board: the same ncnn options,
    layers and frozen files (what differs is in BOARD_KEYS and the toolchain files), and a
    profile's board (board_of) brings every key of that board and nothing of the other's."""
    from ci.common import BOARD_KEYS, profile

    for arm, riscv in [("qemu", "rv32"), ("qemu-nostring", "rv32-nostring")]:
        a, r = profile(arm), profile(riscv)
        for key in ("ncnn_options", "ncnn_layers", "ncnn_arch", "frozen"):
            assert a.get(key) == r.get(key), (arm, riscv, key)
        assert a["qemu_system"] == "qemu-system-arm" and r["qemu_system"] == "qemu-system-riscv32"
    board, nostring = profile("rv32"), profile("rv32-nostring")
    assert {k: board.get(k) for k in BOARD_KEYS} == {k: nostring.get(k) for k in BOARD_KEYS}
    # SIMPLESTL (no C++ library for this target) comes with the toolchain, not the options.
    from ci.common import cmake_text

    toolchain = REPO / "ci" / board["ncnn_toolchain"]
    assert "set(NCNN_MP_NO_CXX_LIBRARY ON)" in toolchain.read_text()
    assert "set(NCNN_SIMPLESTL ON CACHE BOOL" in cmake_text(toolchain)


def test_toolchain_files_name_the_layer_code_the_profiles_derive_layers_for() -> None:
    """ncnn picks its layer code by CMAKE_SYSTEM_PROCESSOR, and ncnn_mp_tools/layers.py derives the layers
    a model needs for the profile's ncnn_arch: the two must agree, for the boards' toolchain
    files and for the ESP32 ones (which take the qemu profile's options). `riscv` would bring
    ncnn's RISC-V Convolution, which repacks weights into RAM."""
    from ci.common import PROFILES, profile

    from ci.common import cmake_text

    def processor(path: Path) -> str:  # (set in the board's file or ci/board.common.cmake)
        (name,) = re.findall(r"^set\(CMAKE_SYSTEM_PROCESSOR (\w+)\)", cmake_text(path), re.M)
        return name

    boards = [name for name in PROFILES if "ncnn_toolchain" in profile(name)]
    assert {"qemu", "rv32"} <= set(boards)
    for name in boards:
        prof = profile(name)
        assert processor(REPO / "ci" / prof["ncnn_toolchain"]) == prof["ncnn_arch"], name
    esp32 = sorted((REPO / "ci" / "esp32").glob("*.toolchain.cmake"))
    # Every toolchain file holds only what its board differs in: the rest is included.
    for path in [REPO / "ci" / profile(name)["ncnn_toolchain"] for name in boards] + esp32:
        assert "include(${CMAKE_CURRENT_LIST_DIR}/../board.common.cmake)" in path.read_text(), path.name
    assert [p.name.split(".")[0] for p in esp32] == ["esp32c3", "esp32c6", "esp32p4", "esp32s3"]
    for path in esp32:
        assert processor(path) == profile("qemu")["ncnn_arch"], path.name


def test_prune_cache_removes_only_stale_unlocked_entries(tmp_path: Path) -> None:
    """Cached builds no run used for STALE_DAYS go; the one in use, a recent one, one whose
    lock another process holds, and stray files stay."""
    import fcntl
    import os
    import time

    from ci.common import STALE_DAYS, mark_used, prune_cache

    old = time.time() - (STALE_DAYS + 1) * 86400
    entries = {}
    for name in ("current", "recent", "stale", "stale-locked", "stale-used-lately"):
        d = tmp_path / name
        (d / "install").mkdir(parents=True)
        (d / ".done").touch()
        os.utime(d / ".done", (old, old))
        entries[name] = d
    mark_used(entries["recent"])
    mark_used(entries["stale-used-lately"])  # built long ago, used now
    (tmp_path / "stray.lock").touch()
    with open(tmp_path / "stale-locked.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        removed = prune_cache(tmp_path.iterdir(), keep=entries["current"])
    assert removed == [entries["stale"]]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["current", "recent", "stale-locked", "stale-locked.lock", "stale-used-lately", "stray.lock"]

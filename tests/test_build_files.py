"""micropython.mk and micropython.cmake name the same sources, and the CMake file works as ports use it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "ci"))


def mk_sources() -> list[str]:
    text = (REPO / "micropython.mk").read_text()
    return re.findall(r"\$\(NCNN_MP_DIR\)/(ncnn_mp/\S+\.(?:c|cpp))\b", text)


def cmake_sources() -> list[str]:
    text = (REPO / "micropython.cmake").read_text()
    return re.findall(r"\$\{CMAKE_CURRENT_LIST_DIR\}/(ncnn_mp/\S+\.(?:c|cpp))$", text, re.M)


def test_mk_and_cmake_list_the_same_sources() -> None:
    on_disk = sorted(str(p.relative_to(REPO)) for p in (REPO / "ncnn_mp").glob("*.c*"))
    assert sorted(mk_sources()) == on_disk
    assert sorted(cmake_sources()) == on_disk


def configure_usermod(tmp_path: Path, *cmake_args: str) -> dict[str, str]:
    """Configure a CMake project that includes MicroPython's py/usermod.cmake the way
    CMake ports (esp32, rp2) do, and report what the usermod target gathered."""
    from sources import micropython_source

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
    from ncnn_build import ncnn_prefix

    return ncnn_prefix("unix")


def test_cmake_usermod_with_ncnn_dir(tmp_path: Path, ncnn_prefix: Path) -> None:
    probe = configure_usermod(tmp_path, f"-DNCNN_DIR={ncnn_prefix}")
    assert sorted(probe["sources"].split(";")) == sorted(str(REPO / s) for s in cmake_sources())
    includes = probe["includes"].split(";")
    assert str(REPO / "ncnn_mp") in includes
    assert str(ncnn_prefix / "include") in includes
    assert str(ncnn_prefix / "lib" / "libncnn.a") in probe["links"].split(";")


def test_cmake_usermod_with_find_package(tmp_path: Path, ncnn_prefix: Path) -> None:
    probe = configure_usermod(tmp_path, f"-DCMAKE_PREFIX_PATH={ncnn_prefix}")
    assert "ncnn" in probe["links"].split(";")
    assert str(ncnn_prefix / "include") in probe["includes"].split(";")


def test_cmake_usermod_rejects_a_wrong_ncnn_dir(tmp_path: Path) -> None:
    from sources import micropython_source

    (tmp_path / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.12)\nproject(p C)\ninclude({micropython_source()}/py/usermod.cmake)\n")
    p = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "b"),
                        f"-DUSER_C_MODULES={REPO / 'micropython.cmake'}", f"-DNCNN_DIR={tmp_path}"],
                       capture_output=True, text=True)
    assert p.returncode != 0
    said = " ".join((p.stdout + p.stderr).split())  # CMake wraps long messages
    assert f"ncnn_mp: NCNN_DIR={tmp_path} holds no include/ncnn/c_api.h" in said

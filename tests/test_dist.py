# SPDX-License-Identifier: MIT
"""ncnn_mp_lib installed the MicroPython way, and `make dist`'s files.

mpremote's `mip install` (mpremote.mip.do_mip, run in this process as its command line runs it)
installs the package from an index served on 127.0.0.1 (ci/package.py writes it, as make dist
does), by name and by package.json URL, writing the files through the Unix firmware's own file
calls (tests/mip_transport.py: mpremote's Transport over a firmware process); a fresh firmware
then imports the installed files and runs a decoder. The index is asked exactly the paths mip's
protocol names, which on-device mip asks too. A missing package or version, an index nobody
serves and a target the firmware cannot write fail as mpremote says. The QEMU boards import the
.mpy compiled for their architecture from a ROMFS image. The profiles' .mpy architectures are
their ports'. `make dist` writes what its manifest and SHA256SUMS say. Only loopback addresses:
the server binds 127.0.0.1 on a port the system picks.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import socket
import subprocess
import zipfile
from pathlib import Path
from typing import Iterator
from unittest import mock

import pytest

from ci.common import PINS, profile
from ci.package import NAME, firmware_mpy, loads, mpy_header, sources, version, write_python
from conftest import REPO, MicroPython, QemuBoard, Served, serve_folder

# The archs the tests below install or import (make dist builds every profile's).
ARCHS = ["x64", "armv7m", "rv32imc"]

# A decoder on known input: NanoDet's one object (a cup at 0.9) in a 2-cell grid at stride 8,
# every side 2 strides from the cell's centre (its logits peak at bin 2), and the k best scores.
DECODE = """
import array
from ncnn_mp_lib import detection, nanodet
print(detection.__file__, nanodet.__file__)
cls = array.array("f", [0.0] * 160)
cls[80 + 41] = 0.9
dis = array.array("f", [0.0] * 64)
for side in range(4):
    dis[32 + side * 8 + 2] = 10.0
for o in detection.nms(nanodet.decode(8, 2, 2, memoryview(cls), memoryview(dis)), 0.5, same=5):
    print("%.2f %.2f %.2f %.2f %.2f %s" % (o[0], o[1], o[2], o[3], o[4], nanodet.LABELS[o[5]]))
print(detection.top_k(memoryview(cls), 2))
"""
DECODED = ["0.90 -4.00 -12.00 28.00 20.00 cup", "[121, 0]"]


def decoded(stdout: str, suffix: str) -> None:
    """The decoder printed DECODED, from modules loaded from files ending `suffix`."""
    lines = stdout.strip().splitlines()
    files = lines[0].split()
    assert len(files) == 2 and all(f.endswith(suffix) for f in files), stdout
    assert lines[1:] == DECODED, stdout


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ncnn_mp_lib laid out by ci/package.py (make dist's code) for the archs tested here."""
    from ci.firmware import mpy_cross

    out = tmp_path_factory.mktemp("python")
    write_python(out, ARCHS, mpy_cross())
    return out


@pytest.fixture(scope="module")
def served(package: Path) -> Iterator[Served]:
    """The package folder served over HTTP on 127.0.0.1 while the tests of this module run."""
    with serve_folder(package) as server:
        yield server


def mip_install(micropython: MicroPython, target: Path, *args: str) -> tuple[str, Exception | None]:
    """`mpremote mip install --target TARGET ARGS...` as mpremote's command line runs it (its
    argument parser, its do_mip), the device being the Unix firmware (tests/mip_transport.py):
    what it printed, and the exception it ended with (None when it finished)."""
    from mip_transport import FirmwareTransport
    from mpremote.main import State, argparse_mip
    from mpremote.mip import do_mip

    printed = io.StringIO()
    state = State()
    # (mpremote fetches with urllib, which would send even 127.0.0.1 through a proxy the environment names)
    with FirmwareTransport(micropython.binary, micropython.env, target.parent) as transport, \
            contextlib.redirect_stdout(printed), mock.patch.dict(os.environ, no_proxy="127.0.0.1", NO_PROXY="127.0.0.1"):
        state.transport = transport
        try:
            do_mip(state, argparse_mip().parse_args(["install", "--target", str(target), *args]))
        except Exception as e:  # (what mpremote's main prints as its error)
            return printed.getvalue(), e
    return printed.getvalue(), None


def index_paths(index: str, name: str, mpy_version: str, v: str, hashes: list[list[str]]) -> list[str]:
    """The paths mip asks an index for a package, in order: micropython-lib's mip on a board and
    mpremote's on a PC alike ask `{index}/package/{mpy version}/{name}/{version}.json`, then each
    of its `hashes` as `{index}/file/{hash[:2]}/{hash}` (mpy version: sys.implementation._mpy &
    0xff, or "py" for sources)."""
    return [f"{index}/package/{mpy_version}/{name}/{v}.json", *(f"{index}/file/{h[:2]}/{h}" for _, h in hashes)]


def run_installed(micropython: MicroPython, lib: Path) -> str:
    """DECODE on the Unix firmware with only `lib` (and the firmware's frozen modules) to import from."""
    env = dict(micropython.env, MICROPYPATH=f".frozen:{lib}")
    p = subprocess.run([str(micropython.binary), "-c", DECODE], capture_output=True, text=True, env=env,
                       cwd=lib, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_package_json_and_index(package: Path) -> None:
    """package.json names every source by a relative URL; each index's hashes are its files'."""
    v = version()
    pj = json.loads((package / "package.json").read_text())
    assert pj["version"] == v and pj["deps"] == []
    assert [u for u, _ in pj["urls"]] == [f"{NAME}/{p.name}" for p in sources()]
    assert all((package / url).read_bytes() == (REPO / target).read_bytes() for target, url in pj["urls"])
    for arch in ARCHS:
        for mpy_version, suffix in (("6", ".mpy"), ("py", ".py")):
            for name in ("latest", v):
                index = json.loads((package / "mip" / arch / "package" / mpy_version / NAME / f"{name}.json").read_text())
                assert index["version"] == v and len(index["hashes"]) == len(sources())
                for target, h in index["hashes"]:
                    assert target.endswith(suffix), target
                    data = (package / "mip" / arch / "file" / h[:2] / h).read_bytes()
                    assert hashlib.sha256(data).hexdigest().startswith(h)
                    if suffix == ".mpy":
                        assert data == (package / "mpy" / arch / target).read_bytes()
                        header = mpy_header(data)
                        assert header["mpy_version"] == 6 and header["arch"] in ("none", arch), (target, header)
        # the viper scans make detection native code: an .mpy for this arch only
        assert mpy_header((package / "mpy" / arch / NAME / "detection.mpy").read_bytes())["arch"] == arch


def test_firmware_transport(micropython: MicroPython, tmp_path: Path) -> None:
    """The transport answers as mpremote's serial one: output, values, the device's exceptions
    (TransportExecError, OSError from its fs_* calls), globals kept until a soft reset."""
    from mip_transport import FirmwareTransport
    from mpremote.transport import TransportExecError

    with FirmwareTransport(micropython.binary, micropython.env, tmp_path) as t:
        assert t.exec("x = 41\nprint('on', 'the firmware')") == b"on the firmware\n"
        t.exec("import sys")
        assert t.eval("x + 1") == 42 and t.eval("sys.implementation.name") == "micropython"
        with pytest.raises(TransportExecError, match="ZeroDivisionError"):
            t.exec("1 / 0")
        t.fs_writefile(str(tmp_path / "f"), bytes(range(256)) * 3)
        assert (tmp_path / "f").read_bytes() == bytes(range(256)) * 3
        assert t.fs_hashfile(str(tmp_path / "f"), "sha256") == hashlib.sha256(bytes(range(256)) * 3).digest()
        with pytest.raises(FileNotFoundError):
            t.fs_stat(str(tmp_path / "none"))
        t.enter_raw_repl(soft_reset=True)
        with pytest.raises(TransportExecError, match="NameError"):
            t.eval("x")


def test_mpremote_mip_installs_from_an_index(micropython: MicroPython, package: Path, served: Served,
                                             tmp_path: Path) -> None:
    """`mpremote mip install --index .../mip/x64 ncnn_mp_lib`: the .mpy files for the firmware's
    arch (the mpy version asked of the firmware), exactly the paths mip's protocol names; they run."""
    index = f"{served.url}/mip/x64"
    lib = tmp_path / "lib"
    mpy_version = str(int(micropython.check("import sys\nprint(sys.implementation._mpy)\n")) & 0xFF)
    listed = json.loads((package / "mip" / "x64" / "package" / mpy_version / NAME / "latest.json").read_text())
    served.requests.clear()
    out, err = mip_install(micropython, lib, "--index", index, NAME)
    assert err is None, out + repr(err)
    lines = out.splitlines()
    assert lines[:2] == [f"Install {NAME}", f"Installing {NAME} (latest) from {index} to {lib}"], out
    assert sorted(lines[2:-1]) == sorted(f"Installing: {lib}/{NAME}/{p.stem}.mpy" for p in sources()), out
    assert lines[-1] == "Done", out
    assert served.requests == [(p, 200) for p in index_paths("/mip/x64", NAME, mpy_version, "latest",
                                                              listed["hashes"])]
    assert sorted(p.name for p in (lib / NAME).iterdir()) == sorted(p.stem + ".mpy" for p in sources())
    decoded(run_installed(micropython, lib), ".mpy")
    served.requests.clear()
    out, err = mip_install(micropython, lib, "--index", index, NAME)  # (mpremote checks the hashes on the device)
    assert err is None and out.count("Exists:") == len(sources()) and "Installing:" not in out, out
    assert served.requests == [(f"/mip/x64/package/{mpy_version}/{NAME}/latest.json", 200)]


def test_mpremote_mip_installs_sources_and_from_package_json(micropython: MicroPython, package: Path,
                                                              served: Served, tmp_path: Path) -> None:
    """--no-mpy and NAME@version take the sources from the index; a package.json URL its files."""
    served.requests.clear()
    out, err = mip_install(micropython, tmp_path / "py", "--index", f"{served.url}/mip/x64", "--no-mpy",
                           f"{NAME}@{version()}")
    assert err is None and out.splitlines()[-1] == "Done", out + repr(err)
    listed = json.loads((package / "mip" / "x64" / "package" / "py" / NAME / f"{version()}.json").read_text())
    assert [p for p, _ in served.requests] == index_paths("/mip/x64", NAME, "py", version(), listed["hashes"])
    decoded(run_installed(micropython, tmp_path / "py"), ".py")
    for url, lib, suffix in ((f"{served.url}/package.json", tmp_path / "url", ".py"),
                             (f"{served.url}/mpy/x64/package.json", tmp_path / "url-mpy", ".mpy")):
        out, err = mip_install(micropython, lib, url)
        assert err is None and out.splitlines()[-1] == "Done", out + repr(err)
        decoded(run_installed(micropython, lib), suffix)


def test_committed_package_json_is_current() -> None:
    """ncnn_mp_lib/package.json (what `mpremote mip install github:OWNER/REPO/ncnn_mp_lib` reads)
    lists every file of the package beside it, at the project's version: regenerate it with
    `python3 -m ci.package` after adding a module."""
    from ci.package import COMMITTED, committed_package_json

    assert COMMITTED.read_text() == committed_package_json(), "stale: run python3 -m ci.package"


def test_mip_installs_from_the_committed_package_json(micropython: MicroPython, tmp_path: Path) -> None:
    """The checkout served as a repository host serves it (its files at their paths): mip takes
    ncnn_mp_lib/package.json's relative URLs beside it, and the installed package decodes."""
    with serve_folder(REPO) as s:
        out, err = mip_install(micropython, tmp_path / "lib", f"{s.url}/{NAME}/package.json")
        asked = [p for p, _ in s.requests]
    assert err is None and out.splitlines()[-1] == "Done", out + repr(err)
    assert asked == [f"/{NAME}/package.json", *(f"/{NAME}/{p.name}" for p in sources())], asked
    decoded(run_installed(micropython, tmp_path / "lib"), ".py")


def test_mpremote_mip_failures_are_clear(micropython: MicroPython, served: Served, tmp_path: Path) -> None:
    """A package or version the index lacks, an index nobody serves: mpremote's CommandError
    naming the URL, after "Package may be partially installed", and nothing installed. A target
    the firmware cannot write: the firmware's OSError."""
    from mpremote.commands import CommandError

    index = f"{served.url}/mip/x64"
    lib = tmp_path / "lib"
    for package, asked in (("no_such_package", "no_such_package/latest.json"),
                           (f"{NAME}@9.9.9", f"{NAME}/9.9.9.json")):
        out, err = mip_install(micropython, lib, "--index", index, package)
        assert isinstance(err, CommandError) and str(err) == f"Package not found: {index}/package/6/{asked}", err
        assert out.splitlines()[-1] == "Package may be partially installed", out
    with socket.socket() as s:  # a loopback port nobody listens on (bound, then closed)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out, err = mip_install(micropython, lib, "--index", f"http://127.0.0.1:{port}", NAME)
    assert isinstance(err, CommandError) and re.fullmatch(
        rf"\[Errno 111\] Connection refused requesting http://127.0.0.1:{port}/package/6/{NAME}/latest.json",
        str(err)), err
    assert not lib.exists()
    (tmp_path / "file").write_text("")
    out, err = mip_install(micropython, tmp_path / "file", "--index", index, NAME)
    # (mpremote's check of a file already there meets the firmware's ENOTDIR first)
    assert isinstance(err, NotADirectoryError) and err.args[1].startswith(f"{tmp_path}/file/{NAME}/"), (out, err)
    assert "Package may be partially installed" not in out, out


@pytest.mark.mcu
@pytest.mark.parametrize("name", ["qemu", "rv32"])
def test_board_imports_its_mpy(name: str, package: Path, tmp_path: Path) -> None:
    """The board's .mpy files from a ROMFS image at /rom/lib, decoding as on Unix. (The board
    script puts /rom/lib first on its sys.path, where upstream's ports append it after
    ".frozen": the firmware's frozen copy would answer otherwise. VfsRom has no chdir.)"""
    from ci.qemu import run_script
    from ncnn_mp_tools.romfs_pack import pack

    arch = profile(name)["mpy_arch"]
    folder = package / "mpy" / arch / NAME
    image = tmp_path / "romfs.img"
    image.write_bytes(pack({f"lib/{NAME}/{p.name}": p.read_bytes() for p in sorted(folder.glob("*.mpy"))}))
    script = "import sys\nsys.path[:0] = ['/rom/lib']\nprint(sys.implementation._mpy)\n" + DECODE
    r = run_script(name, QemuBoard(name).binary, script.encode(), timeout=120, romfs=image)
    assert r.returncode == 0, r.output
    mpy, rest = r.output.split("\n", 1)
    assert loads(firmware_mpy(int(mpy))["arch"], arch), r.output
    decoded(rest.replace("\r", ""), ".mpy")


def port_march(name: str) -> str:
    """The -march the profile's port gives mpy-cross for its frozen modules (MPY_CROSS_FLAGS)."""
    prof = profile(name)
    from ci.sources import micropython_source

    make_vars = dict(v.split("=", 1) for v in prof.get("make_vars", []) if "=" in v)
    if "port_dir" in prof:
        mk = REPO / prof["port_dir"] / "Makefile"
    elif "BOARD_DIR" in make_vars:
        mk = Path(make_vars["BOARD_DIR"].replace("{repo}", str(REPO))) / "mpconfigboard.mk"
    else:
        mk = micropython_source() / "ports" / prof["port"] / "boards" / make_vars["BOARD"] / "mpconfigboard.mk"
    (march,) = re.findall(r"^MPY_CROSS_FLAGS \+= -march=(\S+)", mk.read_text(), re.M)
    return march


@pytest.mark.parametrize("name", ["qemu", "qemu-m4f", "rv32", "xtensa"])
def test_profiles_mpy_arch_is_their_ports(name: str) -> None:
    assert profile(name)["mpy_arch"] == port_march(name)


def test_unix_mpy_arch_is_the_firmwares(micropython: MicroPython) -> None:
    mpy = int(micropython.check("import sys\nprint(sys.implementation._mpy)\n"))
    assert firmware_mpy(mpy) == {"mpy_version": 6, "mpy_sub_version": 3, "arch": profile("unix")["mpy_arch"]}


def test_dist_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    """A PROFILE, MODELS, a DIST that is a file: one line each, before anything is built."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "NCNN_MP_MODELS")}
    (tmp_path / "file").write_text("")
    for args, says in ((["PROFILE=qemu"], "make dist writes every board's firmware, not only PROFILE=qemu's"),
                       (["MODELS=m.param"], "make dist packs the profiles as ci/profiles.toml has them"),
                       ([f"DIST={tmp_path / 'file'}"], "is a file")):
        p = subprocess.run(["make", "-s", "dist", *args], cwd=REPO, capture_output=True, text=True, env=env,
                           timeout=600)
        assert p.returncode != 0 and says in p.stderr, p.stdout + p.stderr
        (line,) = [ln for ln in p.stderr.splitlines() if ln.startswith("ncnn_mp setup:")]


def licences_are_right(folder: Path) -> None:
    """licenses/ as make dist writes it: the project's MIT licence and notices as committed, ncnn's
    BSD 3-Clause text and MicroPython's MIT one, none empty."""
    from ci.dist import licence_files

    assert sorted(p.name for p in folder.iterdir()) == sorted(licence_files())
    for name in ("LICENSE", "THIRD_PARTY_NOTICES.md"):
        assert (folder / name).read_bytes() == (REPO / name).read_bytes(), name
    ncnn = (folder / "ncnn-LICENSE.txt").read_text()
    assert "ncnn source code is licensed under the BSD 3-Clause License" in ncnn, ncnn[:300]
    mp = (folder / "micropython-LICENSE").read_text()
    assert mp.startswith("The MIT License (MIT)") and "Damien P. George" in mp, mp[:300]


def test_dist_licences(tmp_path: Path) -> None:
    """licenses/ from the pinned sources, each a manifest entry saying whose licence it is."""
    from ci.dist import write_licences

    files = write_licences(tmp_path / "licenses")
    licences_are_right(tmp_path / "licenses")
    assert files["ncnn-LICENSE.txt"] == {"kind": "licence", "of": f"ncnn {PINS['ncnn']['version']}"}
    assert files["micropython-LICENSE"]["of"] == f"MicroPython {PINS['micropython']['version']}"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`make dist DIST=...` once for the module (the boards' firmwares built by the other tests,
    brought up to date here): the folder it wrote."""
    root = tmp_path_factory.mktemp("dist")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    p = subprocess.run(["make", "-s", "dist", f"DIST={root}"], cwd=REPO, capture_output=True, text=True,
                       env=env, timeout=1800)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    out = root / f"ncnn_mp-{version()}"
    assert Path(p.stdout.strip().splitlines()[-1]) == out
    return out


@pytest.mark.mcu
def test_make_dist(dist: Path) -> None:
    """Every file of make dist's folder in SHA256SUMS and the manifest, with its checksum and size;
    what each firmware is, asked of the firmware; .mpy for every profile's architecture."""
    from ci.dist import PROFILES
    from ci.ncnn_build import cmake_options

    out = dist
    files = sorted(str(f.relative_to(out)) for f in out.rglob("*") if f.is_file())
    sums = dict(reversed(line.split("  ", 1)) for line in (out / "SHA256SUMS").read_text().splitlines())
    assert sorted(sums) == [f for f in files if f != "SHA256SUMS"]
    for f, h in sums.items():
        assert hashlib.sha256((out / f).read_bytes()).hexdigest() == h, f
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["version"] == version()
    assert sorted(manifest["files"]) == [f for f in files if f not in ("SHA256SUMS", "manifest.json")]
    for f, info in manifest["files"].items():
        assert info["sha256"] == sums[f] and info["size"] == (out / f).stat().st_size, f
    firmwares = {info["profile"]: (f, info) for f, info in manifest["files"].items() if info["kind"] == "firmware"}
    assert sorted(firmwares) == sorted(PROFILES)
    for name, (f, info) in firmwares.items():
        prof = profile(name)
        assert f == f"firmware/{name}/{prof.get('firmware', 'micropython')}"
        assert info["ncnn_options"] == cmake_options(name) and info["ncnn_layers"] == prof.get("ncnn_layers", "all")
        assert loads(info["arch"], prof["mpy_arch"]) and info["mpy_version"] == 6
        assert info["build_info"]["NCNN_MP_KERNELS"] == ("NCNN_MP_KERNELS=1" in prof["make_vars"]), (name, info)
    archs = {info.get("for_arch") for info in manifest["files"].values() if info["kind"] == "mpy"}
    assert archs == {profile(n)["mpy_arch"] for n in PROFILES}
    (tools,) = [f for f, info in manifest["files"].items() if info["kind"] == "tools"]
    assert tools == f"tools/ncnn_mp_tools-{version()}-py3-none-any.whl", tools
    with zipfile.ZipFile(out / tools) as z:
        names = set(z.namelist())
        entry_points = z.read(f"ncnn_mp_tools-{version()}.dist-info/entry_points.txt").decode()
    assert {"ncnn_mp_tools/cli.py", "ncnn_mp_tools/ncnn_layers.json", "ncnn_mp_tools/models.toml",
            "ncnn_mp_tools/probes/preflight_probe.py"} <= names, sorted(names)
    assert {f"ncnn_mp_tools-{version()}.dist-info/licenses/{n}" for n in ("LICENSE", "THIRD_PARTY_NOTICES.md")} <= names \
        or {f"ncnn_mp_tools-{version()}.dist-info/{n}" for n in ("LICENSE", "THIRD_PARTY_NOTICES.md")} <= names, \
        sorted(names)
    assert "ncnn-mp = ncnn_mp_tools.cli:main" in entry_points, entry_points
    assert not any(n.startswith(("ci/", "tests/")) for n in names), sorted(names)
    licences_are_right(out / "licenses")
    assert sorted(f for f, info in manifest["files"].items() if info["kind"] == "licence") == \
        sorted(f"licenses/{name}" for name in os.listdir(out / "licenses"))


def fresh_venv(folder: Path) -> Path:
    """A new virtual environment (the system's python3, nothing of the test venv): its bin/."""
    subprocess.run(["python3", "-m", "venv", str(folder)], check=True, capture_output=True, timeout=300)
    return folder / "bin"


def pinned_versions(folder: Path) -> Path:
    """A pip constraints file: the versions ci/pins.toml pins (the wheel's dependencies among them)."""
    lines = [r.split(" --hash", 1)[0] for r in PINS["python"]["requirements"]]
    path = folder / "constraints.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.mcu
def test_tools_wheel_in_a_fresh_venv(dist: Path, tmp_path: Path) -> None:
    """What a user without a clone does: dist's wheel installed into a new virtual environment,
    and `ncnn-mp` run from a folder outside the checkout against dist's firmwares: the tests' ONNX
    model converted and checked (fp32 against onnxruntime, int8 on dist's unix-kernels firmware),
    preflight on the Cortex-M3 board, its ROMFS packed, and run_board.py run on the board."""
    from test_onnx_model import make_onnx, photo_crops

    (wheel,) = (dist / "tools").glob("*.whl")
    bin_dir = fresh_venv(tmp_path / "venv")
    user = tmp_path / "user"  # (no checkout here, nor above it)
    user.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "MAKEFLAGS", "MAKELEVEL")}
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    installed = subprocess.run([str(bin_dir / "pip"), "install", "-c", str(pinned_versions(tmp_path)),
                                f"{wheel}[model]"], capture_output=True, text=True, timeout=1200, env=env)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]

    def ncnn_mp(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["ncnn-mp", *args], cwd=user, capture_output=True, text=True, timeout=1800, env=env)

    where = subprocess.run([str(bin_dir / "python"), "-c", "import ncnn_mp_tools, sys; print(ncnn_mp_tools.__file__)"],
                           cwd=user, capture_output=True, text=True, env=env)
    assert where.stdout.startswith(str(tmp_path / "venv")), where.stdout + where.stderr
    version_line = ncnn_mp("--version")
    assert version_line.stdout.strip() == f"ncnn-mp {version()}", version_line.stdout + version_line.stderr
    make_onnx(user / "small_cnn.onnx")
    photos = photo_crops(user / "photos")
    model = ncnn_mp("model", "--dist", str(dist), "--board", "qemu", "small_cnn.onnx", "--images", str(photos))
    assert model.returncode == 0, model.stdout[-4000:] + model.stderr[-4000:]
    out = user / "small_cnn"
    assert {"small_cnn.param", "small_cnn.bin", "small_cnn-int8.param", "small_cnn-int8.bin", "romfs.img",
            "run_board.py", "report.json"} <= {p.name for p in out.iterdir()}, model.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["preflight_ok"] and report["firmware"] == str(dist / "firmware" / "qemu" / "firmware.elf"), report
    assert report["run"].startswith(f"ncnn-mp run --firmware {dist / 'firmware' / 'qemu' / 'firmware.elf'} "), report
    assert report["int8_vs_fp32"]["relative"] < 0.1 and report["wheel_vs_onnxruntime"]["relative"] < 1e-4, report
    assert "measured on the 'qemu' firmware under QEMU" in model.stdout, model.stdout[-3000:]

    packed = ncnn_mp("romfs", "-o", "mine.img", str(out / "small_cnn-int8.param"), str(out / "small_cnn-int8.bin"))
    assert packed.returncode == 0 and (user / "mine.img").stat().st_size > (out / "small_cnn-int8.bin").stat().st_size, \
        packed.stdout + packed.stderr
    preflight = ncnn_mp("preflight", "--dist", str(dist), "--board", "qemu", str(out / "small_cnn-int8.param"),
                        "in0=32x32x3", "--plans", "plans")
    assert preflight.returncode == 0, preflight.stdout[-3000:] + preflight.stderr[-3000:]
    assert (user / "plans" / "small_cnn-int8.plan").is_file(), preflight.stdout[-2000:]
    ran = ncnn_mp("run", "--dist", str(dist), "--board", "qemu", "--romfs", str(out / "romfs.img"), str(out / "run_board.py"))
    assert ran.returncode == 0 and "small_cnn-int8 out0 " in ran.stdout, ran.stdout[-3000:] + ran.stderr[-3000:]
    wrong = ncnn_mp("preflight", "--board", "qemu", str(out / "small_cnn.param"))
    assert wrong.returncode == 2 and "no firmware given" in wrong.stderr, wrong.stderr

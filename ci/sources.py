# SPDX-License-Identifier: MIT
"""Fetching pinned sources into the cache, checksum-checked, and the system packages."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from ci.common import PINS, REPO, Settings, cache_root, fail, key_of, locked, run, say, sha256_of


def missing_debian_packages(names: list[str]) -> list[str]:
    missing = []
    for name in names:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name],
                           capture_output=True, text=True)
        if "install ok installed" not in r.stdout:
            missing.append(name)
    return missing


def ensure_debian_packages(names: list[str] | None = None) -> None:
    names = names if names is not None else PINS["debian"]["packages"]
    if shutil.which("dpkg-query") is None:
        say("not a Debian system: make sure these are installed: " + " ".join(names))
        return
    missing = missing_debian_packages(names)
    if not missing:
        return
    say("installing Debian packages: " + " ".join(missing))
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    todo = f"install them by hand: sudo apt-get install {' '.join(missing)}"
    run(sudo + ["apt-get", "update", "-q"], "apt-get update failed", todo,
        log=cache_root() / "logs" / "apt-update.log")
    run(sudo + ["apt-get", "install", "-y", "-q", *missing], "apt-get install failed", todo,
        log=cache_root() / "logs" / "apt-install.log")


def checked(path: Path, sha256: str, origin: str) -> Path:
    got = sha256_of(path)
    if got != sha256:
        path.rename(path.with_suffix(path.suffix + ".bad"))
        fail(f"checksum mismatch for {path.name} from {origin}",
             f"expected sha256 {sha256}, got {got}; the file was moved aside, "
             "retry, and if it persists the pin in ci/pins.toml is wrong")
    return path


def _unpack(archive: Path, dest_parent: Path, top: str) -> Path:
    dest = dest_parent / top
    if (dest / ".unpacked").exists():
        return dest
    say(f"unpacking {archive.name}")
    tmp = dest_parent / (top + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(tmp, filter="tar")
    inner = tmp / top
    if not inner.is_dir():
        fail(f"{archive.name} does not hold {top}/", "the pinned archive is not what ci/pins.toml expects")
    shutil.rmtree(dest, ignore_errors=True)
    inner.rename(dest)
    shutil.rmtree(tmp)
    (dest / ".unpacked").touch()
    return dest


def ncnn_source() -> Path:
    """ncnn's source tree: the pinned PyPI sdist, unpacked in the cache."""
    with locked(cache_root() / "downloads" / "ncnn.lock", "ncnn's source"):
        return _ncnn_source()


def _ncnn_source() -> Path:
    pin = PINS["ncnn"]
    dl = cache_root() / "downloads"
    archive = dl / pin["file"]
    if not archive.exists():
        say(f"downloading ncnn {pin['version']} source (sdist, ~5 MB)")
        ensure_debian_packages(["faketime"])
        tmp = dl / "ncnn.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        run(["faketime", pin["release_day"], "python3", "-m", "pip", "download", "--no-deps",
             "--no-binary", "ncnn", "-d", tmp, f"ncnn=={pin['version']}"],
            "downloading ncnn's sdist with pip failed",
            "check that PyPI is reachable (pip config) and retry",
            log=cache_root() / "logs" / "ncnn-download.log")
        (tmp / pin["file"]).rename(archive)
        shutil.rmtree(tmp)
    checked(archive, pin["sha256"], "PyPI")
    return _unpack(archive, cache_root() / "src", f"ncnn-{pin['version']}")


def _debian_archive_uri() -> str:
    """The Debian mirror this machine already uses (so no host is hard-coded here)."""
    for src in [Path("/etc/apt/sources.list.d/debian.sources")]:
        if src.exists():
            for line in src.read_text().splitlines():
                if line.startswith("URIs:"):
                    return line.split()[1]
    lst = Path("/etc/apt/sources.list")
    if lst.exists():
        for line in lst.read_text().splitlines():
            parts = line.split()
            if parts and parts[0] == "deb" and "security" not in line:
                return next(p for p in parts[1:] if "://" in p)
    fail("no Debian mirror found in /etc/apt", "set MICROPYTHON_DIR to a MicroPython checkout instead")


def micropython_source() -> Path:
    """MicroPython's source tree: $MICROPYTHON_DIR if set, else the pinned Debian source."""
    override = os.environ.get("MICROPYTHON_DIR")
    if override:
        path = Path(override).resolve()
        if not (path / "py" / "mkrules.mk").exists():
            fail(f"MICROPYTHON_DIR={override} is not a MicroPython source tree",
                 "point it at the top of a MicroPython checkout (the folder holding py/ and ports/)")
        return path
    with locked(cache_root() / "downloads" / "micropython.lock", "MicroPython's source"):
        return _micropython_source()


def _micropython_source() -> Path:
    pin = PINS["micropython"]
    dl = cache_root() / "downloads"
    archive = dl / pin["file"]
    if not archive.exists():
        say(f"downloading MicroPython {pin['version']} source (Debian {pin['debian_suite']}, ~6 MB)")
        apt = cache_root() / "apt"
        for sub in ["lists/partial", "cache/archives/partial"]:
            (apt / sub).mkdir(parents=True, exist_ok=True)
        (apt / "sources.list").write_text(
            "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
            f"{_debian_archive_uri()} {pin['debian_suite']} main\n")
        opts = [f"-o=Dir::Etc::SourceList={apt / 'sources.list'}", "-o=Dir::Etc::SourceParts=/dev/null",
                f"-o=Dir::State::Lists={apt / 'lists'}", f"-o=Dir::Cache={apt / 'cache'}"]
        todo = "check that Debian's archive is reachable, or set MICROPYTHON_DIR to a MicroPython checkout"
        log = cache_root() / "logs" / "micropython-download.log"
        run(["apt-get", *opts, "update"], "apt-get update (MicroPython source list) failed", todo, log=log)
        tmp = dl / "micropython.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        run(["apt-get", *opts, "source", "--download-only",
             f"{pin['debian_package']}={pin['debian_version']}"],
            "apt-get source micropython failed", todo, cwd=tmp, log=log)
        (tmp / pin["file"]).rename(archive)
        shutil.rmtree(tmp)
    checked(archive, pin["sha256"], "Debian")
    return _patched(_unpack(archive, cache_root() / "src", f"micropython-{pin['version']}"), pin.get("patches", []))


def _patched(tree: Path, patches: list[str]) -> Path:
    """`tree` with the pin's patches applied (each says why), as a copy of its own beside it
    named by their contents: the unpacked source stays as Debian ships it. A MicroPython of
    your own (MICROPYTHON_DIR) is used as it is."""
    if not patches:
        return tree
    texts = [(REPO / p).read_text() for p in patches]
    dest = tree.with_name(f"{tree.name}+{key_of(texts)}")
    if (dest / ".patched").exists():
        return dest
    say(f"applying {len(patches)} patch(es) to MicroPython's source: {', '.join(patches)}")
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(tree, tmp, symlinks=True)
    for p in patches:
        run(["patch", "-p1", "--batch", "--forward", "-i", REPO / p], f"applying {p} failed",
            "the patch no longer fits the pinned MicroPython: update or drop it (ci/pins.toml)", cwd=tmp,
            log=cache_root() / "logs" / "micropython-patch.log")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    (dest / ".patched").touch()
    return dest


def debian_pool_file(pin: Settings, what: str) -> Path:
    """A file of Debian's archive pinned by its pool path and sha256 (`pin`: pool_path, file,
    sha256, snapshot), in the cache's downloads. From the Debian mirror this machine uses while
    the archive still has the file; when Debian has replaced it (its pool keeps a file only while
    a suite refers to it), from a snapshot of the archive: $NCNN_MP_DEBIAN_SNAPSHOT (the snapshot
    service's base URL for the Debian archive) + the pin's timestamp + the same pool path."""
    import urllib.error
    import urllib.request

    dl = cache_root() / "downloads"
    archive = dl / pin["file"]
    with locked(dl / f"{pin['file']}.lock", what):
        if not archive.exists():
            urls = [f"{_debian_archive_uri().rstrip('/')}/{pin['pool_path']}"]
            snapshot = os.environ.get("NCNN_MP_DEBIAN_SNAPSHOT")
            if snapshot:
                urls.append(f"{snapshot.rstrip('/')}/{pin['snapshot']}/{pin['pool_path']}")
            tried = []
            for url in urls:
                say(f"downloading {what}: {url}")
                try:
                    with urllib.request.urlopen(url, timeout=60) as r, open(archive.with_suffix(".part"), "wb") as f:
                        shutil.copyfileobj(r, f)
                    archive.with_suffix(".part").rename(archive)
                    break
                except (urllib.error.URLError, OSError) as e:
                    tried.append(f"{url}: {e}")
            else:
                fail(f"downloading {what} failed ({'; '.join(tried)})",
                     "Debian may have dropped this version from its pool: set NCNN_MP_DEBIAN_SNAPSHOT to the "
                     "base URL of a snapshot of the Debian archive (ci/pins.toml says which file)")
        return checked(archive, pin["sha256"], "Debian")

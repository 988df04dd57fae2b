# SPDX-License-Identifier: MIT
"""The published models the examples use, fetched by name and pinned by hash.

    python3 -m ncnn_mp_tools.models fetch squeezenet nanodet retinaface   # (no name: every model)
    python3 -m ncnn_mp_tools.models list
    python3 -m ncnn_mp_tools.models path retinaface

`ncnn_mp_tools/models.toml` is the one list: each model's files, each with the URL it is
published at (fixed to one commit), its sha256 and its size, and the weights' licence. A model's
files go into `<cache>/<name>/` (`--cache`, default `~/.cache/ncnn_mp/models`), the folder the
examples take as their models folder. A download goes to a temporary file in that folder and is
renamed into place only when its size and sha256 are the pinned ones; otherwise it is deleted and
the fetch fails naming the file, the expected and the actual sha256. A file already there is
hashed on every call: right, it is kept (not downloaded again); changed, it is fetched again.

`--mirror URL` fetches from a mirror instead of the files' homes: a server holding
`<URL>/<model name>/<file name>` (the cache's own layout: a cache folder served over HTTP is a
mirror). The files are checked against the same pins.

Exit status 0 when everything asked for is in the cache with the pinned hashes, else 1 with one
line per failure on stderr. Standard library only (no `ci` import): it runs from `make dist`'s
tools tarball as from the checkout.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import tomllib
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

PINS = Path(__file__).with_name("models.toml")
DEFAULT_CACHE = Path.home() / ".cache" / "ncnn_mp" / "models"
PROG = "python3 -m ncnn_mp_tools.models"
CHUNK = 1 << 16


class FetchError(Exception):
    """A model could not be put in the cache; the message has one line per failure."""


@dataclass(frozen=True)
class Pinned:
    name: str
    url: str
    sha256: str
    size: int


@dataclass(frozen=True)
class Model:
    name: str
    title: str
    licence: str
    input: str
    files: tuple[Pinned, ...]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


def models(pins: Path = PINS) -> dict[str, Model]:
    """The pin file's models by name, in its order."""
    table = tomllib.loads(pins.read_text())
    return {name: Model(name, m["title"], m["licence"], m["input"],
                        tuple(Pinned(f["name"], f["url"], f["sha256"], f["size"]) for f in m["files"]))
            for name, m in table.items()}


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def is_cached(path: Path, pin: Pinned) -> bool:
    """The file is there with the pinned size and hash (the size first: no hashing a wrong one)."""
    return path.is_file() and path.stat().st_size == pin.size and sha256_of(path) == pin.sha256


def chosen(names: list[str], known: dict[str, Model]) -> list[Model]:
    """The models named (none: all of them); an unknown name fails before anything is fetched."""
    unknown = [n for n in names if n not in known]
    if unknown:
        raise FetchError(f"unknown model{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                         f"(known: {', '.join(known)})")
    return [known[n] for n in dict.fromkeys(names)] if names else list(known.values())


def source(model: Model, pin: Pinned, mirror: str | None) -> str:
    return f"{mirror.rstrip('/')}/{model.name}/{pin.name}" if mirror else pin.url


def download(url: str, pin: Pinned, dest: Path) -> None:
    """`url` into `dest` through a temporary file beside it, renamed into place only when its
    size and sha256 are the pinned ones (a reader of the cache never sees half a file)."""
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{pin.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        h, size = hashlib.sha256(), 0
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=60) as response:
                    while chunk := response.read(CHUNK):
                        h.update(chunk)
                        size += len(chunk)
                        out.write(chunk)
            except urllib.error.HTTPError as e:
                raise FetchError(f"{url}: HTTP {e.code} {e.reason}") from None
            except (urllib.error.URLError, OSError) as e:
                reason = e.reason if isinstance(e, urllib.error.URLError) else e
                raise FetchError(f"{url}: cannot download ({reason})") from None
        if h.hexdigest() != pin.sha256 or size != pin.size:
            raise FetchError(f"{pin.name}: refused, sha256 {h.hexdigest()} ({size} bytes) from {url}, "
                             f"expected sha256 {pin.sha256} ({pin.size} bytes)")
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def fetch(names: list[str], cache_dir: Path = DEFAULT_CACHE, mirror: str | None = None,
          pins: Path = PINS) -> dict[str, Path]:
    """Every file of the models named (none: all) in `cache_dir/<name>/` with its pinned hash,
    downloaded only when missing or changed: each model's folder by name. Raises FetchError,
    one line per file that failed, after trying them all."""
    wanted = chosen(names, models(pins))
    folders: dict[str, Path] = {}
    failures: list[str] = []
    for model in wanted:
        folder = Path(cache_dir) / model.name
        folder.mkdir(parents=True, exist_ok=True)
        for pin in model.files:
            dest = folder / pin.name
            if is_cached(dest, pin):
                continue
            url = source(model, pin, mirror)
            print(f"fetching {url}", file=sys.stderr, flush=True)
            try:
                download(url, pin, dest)
            except FetchError as e:
                failures.append(str(e))
        folders[model.name] = folder
    if failures:
        raise FetchError("\n".join(failures))
    return folders


def cached_folder(name: str, cache_dir: Path = DEFAULT_CACHE, pins: Path = PINS) -> Path:
    """The model's folder in the cache, every file there with its pinned hash; else FetchError."""
    (model,) = chosen([name], models(pins))
    folder = Path(cache_dir) / name
    bad = [p.name for p in model.files if not is_cached(folder / p.name, p)]
    if bad:
        raise FetchError(f"{name} is not fetched into {cache_dir} ({', '.join(bad)} missing or changed): "
                         f"run {PROG} fetch {name}" + ("" if folder.parent == DEFAULT_CACHE else f" --cache {cache_dir}"))
    return folder


def listing(cache_dir: Path = DEFAULT_CACHE, pins: Path = PINS) -> str:
    """A line per model: name, size, whether cached, licence; then its input."""
    lines = []
    for m in models(pins).values():
        here = sum(is_cached(Path(cache_dir) / m.name / p.name, p) for p in m.files)
        state = "cached" if here == len(m.files) else f"{here}/{len(m.files)} files cached" if here else "not cached"
        lines.append(f"{m.name:<11} {m.size / 1e6:5.2f} MB  {state:<17} {m.title}\n"
                     f"{'':<11} licence: {m.licence}\n{'':<11} input: {m.input}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    cache = argparse.ArgumentParser(add_help=False)
    cache.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                       help="the cache folder, a subfolder per model (default ~/.cache/ncnn_mp/models)")
    ap = argparse.ArgumentParser(prog=PROG, description="The published models the examples use, pinned by "
                                 "sha256 in ncnn_mp_tools/models.toml.")
    sub = ap.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", parents=[cache],
                       help="download the models named (none: all) unless cached; print their folders")
    f.add_argument("names", nargs="*", metavar="NAME")
    f.add_argument("--mirror", metavar="URL", help="fetch <URL>/<model name>/<file name> instead of the pinned URLs")
    sub.add_parser("list", parents=[cache], help="the models: size, whether cached, licence, input")
    p = sub.add_parser("path", parents=[cache], help="print a fetched model's folder (exit 1 if it is not fetched)")
    p.add_argument("name", metavar="NAME")
    args = ap.parse_args(argv)
    try:
        if args.command == "fetch":
            for folder in fetch(args.names, args.cache, args.mirror).values():
                print(folder)
        elif args.command == "list":
            sys.stdout.write(listing(args.cache))
        else:
            print(cached_folder(args.name, args.cache))
    except FetchError as e:
        for line in str(e).splitlines():
            print(f"ncnn_mp models: {line}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

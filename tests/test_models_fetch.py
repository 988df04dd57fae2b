# SPDX-License-Identifier: MIT
"""ncnn_mp_tools.models (`make models`): the published models fetched by name, pinned by sha256.

A local HTTP server on 127.0.0.1 plays the models' homes: a mirror (`--mirror`) laid out as
<model>/<file>, holding copies of the team's models. Every model is fetched and checked against
its pins; a second fetch asks for nothing; a served file with one byte flipped is refused and
leaves nothing in the cache; a file the server lacks fails naming its URL; an unknown name fails
listing the known ones; a cached file changed later is fetched again. The pins are the team's
copies' hashes (which were checked against the published files when they were pinned)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from conftest import REPO, Served, serve_folder, shared_models
from ncnn_mp_tools.models import FetchError, Model, fetch, models

# Where each model's files are among the team's models (tests/conftest.py's shared_models).
SHARED_SUB = {"squeezenet": "real", "nanodet": "real", "retinaface": "real", "mnist": "mnist"}
PINNED = models()


def shared_copy(model: Model) -> Path:
    return shared_models(SHARED_SUB[model.name], *(f.name for f in model.files))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.fixture
def mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Served]]:
    """A folder of copies of the team's models, <model>/<file>, served on 127.0.0.1."""
    folder = tmp_path / "mirror"
    for model in PINNED.values():
        (folder / model.name).mkdir(parents=True)
        for f in model.files:
            shutil.copyfile(shared_copy(model) / f.name, folder / model.name / f.name)
    # (urllib would send even 127.0.0.1 through a proxy the environment names)
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with serve_folder(folder) as served:
        yield folder, served


def test_pins_are_the_team_copies() -> None:
    """models.toml's size and sha256 of every file are the team's copy's: the files the tests
    read are the ones the examples fetch."""
    assert list(PINNED) == ["squeezenet", "nanodet", "retinaface", "mnist"]
    for model in PINNED.values():
        for f in model.files:
            copy = shared_copy(model) / f.name
            assert (copy.stat().st_size, sha256(copy)) == (f.size, f.sha256), f"{model.name}/{f.name}"
            assert f.url.startswith("https://") and f.url.endswith("/" + f.name), f.url
            assert len(f.url.split("/")[5]) == 40, f"{f.url}: not pinned to a commit"


def test_fetch_all_then_nothing(mirror: tuple[Path, Served], tmp_path: Path) -> None:
    _, served = mirror
    cache = tmp_path / "cache"
    folders = fetch([], cache, served.url)
    assert folders == {name: cache / name for name in PINNED}
    for model in PINNED.values():
        assert sorted(p.name for p in folders[model.name].iterdir()) == sorted(f.name for f in model.files)
        for f in model.files:
            assert sha256(folders[model.name] / f.name) == f.sha256
    assert sorted(served.requests) == sorted((f"/{m.name}/{f.name}", 200) for m in PINNED.values() for f in m.files)
    served.requests.clear()
    assert fetch(["retinaface", "squeezenet"], cache, served.url) == \
        {"retinaface": cache / "retinaface", "squeezenet": cache / "squeezenet"}
    assert served.requests == []  # cached with the right hashes: nothing downloaded again


def test_a_corrupted_file_is_refused(mirror: tuple[Path, Served], tmp_path: Path) -> None:
    folder, served = mirror
    flip_a_byte(folder / "nanodet" / "nanodet_m.bin")
    pin = {f.name: f for f in PINNED["nanodet"].files}["nanodet_m.bin"]
    cache = tmp_path / "cache"
    with pytest.raises(FetchError) as e:
        fetch(["nanodet"], cache, served.url)
    assert str(e.value) == (f"nanodet_m.bin: refused, sha256 {sha256(folder / 'nanodet' / 'nanodet_m.bin')} "
                            f"({pin.size} bytes) from {served.url}/nanodet/nanodet_m.bin, "
                            f"expected sha256 {pin.sha256} ({pin.size} bytes)")
    # the good file is kept, the refused one (and its temporary file) is not there
    assert sorted(p.name for p in (cache / "nanodet").iterdir()) == ["nanodet_m.param"]


def test_a_missing_file_names_its_url(mirror: tuple[Path, Served], tmp_path: Path) -> None:
    folder, served = mirror
    (folder / "retinaface" / "mnet.25-opt.param").unlink()
    with pytest.raises(FetchError, match=r"^" + served.url + r"/retinaface/mnet\.25-opt\.param: HTTP 404 "):
        fetch(["retinaface"], tmp_path / "cache", served.url)
    assert sorted(p.name for p in (tmp_path / "cache" / "retinaface").iterdir()) == ["mnet.25-opt.bin"]


def test_an_unknown_name_lists_the_known_ones(mirror: tuple[Path, Served], tmp_path: Path) -> None:
    _, served = mirror
    with pytest.raises(FetchError, match=r"^unknown model yolo \(known: squeezenet, nanodet, retinaface, mnist\)$"):
        fetch(["retinaface", "yolo"], tmp_path / "cache", served.url)
    assert served.requests == [] and not (tmp_path / "cache").exists()  # nothing fetched before the check


def test_a_cached_file_changed_later_is_fetched_again(mirror: tuple[Path, Served], tmp_path: Path) -> None:
    _, served = mirror
    cache = tmp_path / "cache"
    fetch(["mnist"], cache, served.url)
    flip_a_byte(cache / "mnist" / "mnist.bin")
    (cache / "mnist" / "7.pgm").unlink()
    served.requests.clear()
    fetch(["mnist"], cache, served.url)
    assert sorted(served.requests) == [("/mnist/7.pgm", 200), ("/mnist/mnist.bin", 200)]
    assert all(sha256(cache / "mnist" / f.name) == f.sha256 for f in PINNED["mnist"].files)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, no_proxy="127.0.0.1", NO_PROXY="127.0.0.1")
    return subprocess.run([sys.executable, "-m", "ncnn_mp_tools.models", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_command(mirror: tuple[Path, Served], tmp_path: Path) -> None:
    """`python3 -m ncnn_mp_tools.models`: exit status and messages of fetch, path and list."""
    folder, served = mirror
    cache = str(tmp_path / "cache")
    p = cli("path", "squeezenet", "--cache", cache)
    assert (p.returncode, p.stdout) == (1, ""), p
    assert p.stderr == (f"ncnn_mp models: squeezenet is not fetched into {cache} (squeezenet_v1.1.param, "
                        "squeezenet_v1.1.bin, synset_words.txt missing or changed): run python3 -m "
                        f"ncnn_mp_tools.models fetch squeezenet --cache {cache}\n")
    flip_a_byte(folder / "squeezenet" / "synset_words.txt")
    (folder / "nanodet" / "nanodet_m.param").unlink()
    p = cli("fetch", "squeezenet", "nanodet", "--cache", cache, "--mirror", served.url)
    assert p.returncode == 1 and p.stdout == "", p
    errors = [line for line in p.stderr.splitlines() if line.startswith("ncnn_mp models: ")]
    assert len(errors) == 2, p.stderr
    assert errors[0].startswith("ncnn_mp models: synset_words.txt: refused, sha256 "), p.stderr
    assert errors[1] == f"ncnn_mp models: {served.url}/nanodet/nanodet_m.param: HTTP 404 File not found", p.stderr
    p = cli("fetch", "squeezenet", "--cache", cache, "--mirror", served.url)
    assert p.returncode == 1, p
    shutil.copyfile(shared_copy(PINNED["squeezenet"]) / "synset_words.txt", folder / "squeezenet" / "synset_words.txt")
    p = cli("fetch", "squeezenet", "--cache", cache, "--mirror", served.url)
    assert (p.returncode, p.stdout) == (0, f"{cache}/squeezenet\n"), p
    p = cli("path", "squeezenet", "--cache", cache)
    assert (p.returncode, p.stdout, p.stderr) == (0, f"{cache}/squeezenet\n", ""), p
    p = cli("list", "--cache", cache)
    assert p.returncode == 0, p
    states = {line.split()[0]: line.split("MB")[1].split("  ")[1].strip() for line in p.stdout.splitlines()
              if not line.startswith(" ")}
    assert states == {"squeezenet": "cached", "nanodet": "1/2 files cached", "retinaface": "not cached",
                      "mnist": "not cached"}, p.stdout
    p = cli("fetch", "yolo", "--cache", cache)
    assert (p.returncode, p.stderr) == \
        (1, "ncnn_mp models: unknown model yolo (known: squeezenet, nanodet, retinaface, mnist)\n"), p

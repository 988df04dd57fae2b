# SPDX-License-Identifier: MIT
"""README.md and docs/: the README stays a short read (at most 250 lines), every relative link
in it, in docs/ and in CHANGELOG.md points at a file (and heading) that exists, and every command
the README shows in a shell block is run by a test: by one here (RUN_HERE), or by the test named
beside it (RUN_ELSEWHERE). The README's Python is run on the firmware: the REPL session statement
by statement, the other snippets as scripts, each compared with the output the README shows
after it (a line "..." stands for any number of lines)."""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import REPO, MicroPython, serve_folder, shared_models

README = REPO / "README.md"
MAX_LINES = 250
DOCS = [README, REPO / "CHANGELOG.md", *sorted((REPO / "docs").glob("*.md"))]


@dataclass
class Block:
    lang: str
    lines: list[str]
    line: int  # where the block's first line is in its file (1-based)


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, in order."""
    found: list[Block] = []
    current: Block | None = None
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("```"):
            if current is None:
                current = Block(line[3:].strip(), [], n + 1)
            else:
                found.append(current)
                current = None
        elif current is not None:
            current.lines.append(line)
    assert current is None, f"{path.name}: a code block opened at line {current.line - 1} is not closed"
    return found


def prose(path: Path) -> str:
    """The file without its fenced code blocks (where '#' lines and '[x](y)' are code)."""
    out, inside = [], False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            inside = not inside
        elif not inside:
            out.append(line)
    return "\n".join(out)


def anchors(path: Path) -> set[str]:
    """GitHub's anchors for a Markdown file's headings: lower case, punctuation other than '-'
    and '_' dropped, spaces made '-', a repeated one numbered."""
    seen: dict[str, int] = {}
    for line in prose(path).splitlines():
        m = re.match(r"#{1,6} (.*)", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        seen[slug] = seen.get(slug, -1) + 1
        if seen[slug]:
            seen[f"{slug}-{seen[slug]}"] = 0
    return set(seen)


def test_readme_is_short() -> None:
    n = len(README.read_text().splitlines())
    assert n <= MAX_LINES, f"README.md has {n} lines (at most {MAX_LINES}: the rest belongs in docs/)"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(doc: Path) -> None:
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", prose(doc)):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.exists():
            broken.append(f"{target}: no {file}")
        elif not file.is_relative_to(REPO):
            broken.append(f"{target}: outside the repository")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading '#{anchor}' in {file.relative_to(REPO)}")
    assert not broken, f"{doc.relative_to(REPO)}:\n" + "\n".join(broken)


# ---- the README's commands ------------------------------------------------------------------

def block_commands(b: Block) -> list[str]:
    """The commands of a shell block: continuation lines joined, comments dropped, spaces
    made single."""
    found = []
    for line in "\n".join(b.lines).replace("\\\n", " ").splitlines():
        line = re.sub(r"(^|\s)#\s.*$", "", line).strip()
        if line:
            found.append(" ".join(line.split()))
    return found


def shell_blocks() -> list[Block]:
    return [b for b in blocks(README) if b.lang in ("sh", "shell", "bash")]


def commands() -> list[str]:
    """Every command in the README's shell blocks."""
    return [c for b in shell_blocks() for c in block_commands(b)]


def shown(start: str) -> str:
    """The README's command that starts with `start` (there must be exactly one)."""
    matches = [c for c in commands() if c == start or c.startswith(start + " ")]
    assert len(matches) == 1, f"the README shows {len(matches)} commands starting {start!r}: {matches}"
    return matches[0]


def output_after(command: str) -> list[str] | None:
    """The lines of the `text` block right after the shell block holding `command`, if any."""
    bs = blocks(README)
    for i, b in enumerate(bs):
        if b.lang in ("sh", "shell", "bash") and command in block_commands(b):
            nxt = bs[i + 1] if i + 1 < len(bs) else None
            return nxt.lines if nxt is not None and nxt.lang == "text" else None
    return None


def matches_shown(actual: str, expected: list[str]) -> bool:
    """The shown lines appear in `actual` in order and together, a line '...' standing for any
    number of lines; trailing spaces ignored."""
    pattern = "".join(r"(?:.*\n)*?" if line.strip() == "..." else re.escape(line.rstrip()) + r"\n"
                      for line in expected)
    text = "\n".join(line.rstrip() for line in actual.splitlines()) + "\n"
    return re.search(pattern, text) is not None


def make_env() -> dict[str, str]:
    """The environment for a make run inside the test suite: the outer make's own variables
    (jobserver, level, MODELS) left out, so that the command runs as a user's would."""
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "NCNN_MP_MODELS")}


def run_shown(command: str, subs: dict[str, str] | None = None, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """Run a README command from the checkout, with file names replaced by `subs` (whole words
    only) and `python3` by this interpreter (the venv: numpy and the ncnn wheel are there)."""
    for name, value in (subs or {}).items():
        command = re.sub(rf"(?<![\w/.-]){re.escape(name)}(?![\w.])", value, command)
    argv = shlex.split(command)
    if argv[0] == "python3":
        argv[0] = sys.executable
    return subprocess.run(argv, cwd=REPO, env=make_env(), capture_output=True, text=True, timeout=timeout)


# Commands a test elsewhere runs: command -> (file, test function).
RUN_ELSEWHERE: dict[str, tuple[str, str]] = {
    "make dist": ("tests/test_dist.py", "test_make_dist"),
    "pip install": ("tests/test_dist.py", "test_tools_wheel_in_a_fresh_venv"),
    "ncnn-mp model": ("tests/test_dist.py", "test_tools_wheel_in_a_fresh_venv"),
}
# `make test` is what CI runs (.ci/run), and running the suite from inside itself would recurse.
RUN_BY_CI = {"make test": ".ci/run"}
# Commands the tests below run, as the README shows them: command -> test function here.
RUN_HERE: dict[str, str] = {
    "make demo": "test_make_demo",
    "make firmware-path": "test_make_firmware_path",
    "make help": "test_make_help",
    "make photos": "test_photo_example",
    "make models": "test_photo_example",
    "make run SCRIPT=examples/retinaface_detect.py": "test_photo_example",
    "make model PROFILE=qemu": "test_model_on_a_board",
    "make run PROFILE=qemu": "test_model_on_a_board",
    "make compare PROFILE=qemu": "test_model_on_a_board",
}


def runner_of(command: str) -> str | None:
    """The test that runs `command`: the entry whose key is the longest prefix of it."""
    table = {**RUN_HERE, **{k: "::".join(v) for k, v in RUN_ELSEWHERE.items()}, **RUN_BY_CI}
    keys = [k for k in table if command == k or command.startswith(k + " ")]
    return table[max(keys, key=len)] if keys else None


def test_every_readme_command_is_run_by_a_test() -> None:
    cmds = commands()
    assert cmds, "no shell block found in README.md"
    unrun = [c for c in cmds if runner_of(c) is None]
    assert not unrun, "README commands no test runs (add them to RUN_HERE or RUN_ELSEWHERE):\n" + "\n".join(unrun)
    for c in cmds:
        who = runner_of(c)
        assert who is not None
        if c in RUN_BY_CI:
            ci = REPO / who
            steps = [ln.strip() for ln in ci.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
            assert c in steps, f"{who} does not run {c!r}"
        elif "::" in who:
            file, func = who.split("::")
            assert re.search(rf"^def {func}\(", (REPO / file).read_text(), re.M), f"{who} (for {c!r}) does not exist"
        else:
            assert callable(globals().get(who)), f"{who} (for {c!r}) is not a test in this file"
    # nothing in the tables that the README no longer shows
    stale = [k for k in [*RUN_HERE, *RUN_ELSEWHERE, *RUN_BY_CI] if not any(c == k or c.startswith(k + " ") for c in cmds)]
    assert not stale, f"commands the README no longer shows: {stale}"


def test_readme_tool_modules_exist() -> None:
    """Every `python3 -m MODULE` the README shows names a module of this repository."""
    for c in commands():
        m = re.match(r"python3 -m ([\w.]+)", c)
        if m:
            module = m.group(1).replace(".", "/")
            assert (REPO / f"{module}.py").exists() or (REPO / module / "__main__.py").exists(), \
                f"{c!r}: no {module}.py in the repository"


def test_make_firmware_path(micropython: MicroPython) -> None:
    p = run_shown(shown("make firmware-path"))
    assert p.returncode == 0, p.stderr
    path = Path(p.stdout.strip().splitlines()[-1])
    assert path.is_absolute() and path.exists() and os.access(path, os.X_OK), p.stdout


def test_make_help() -> None:
    """`make help` lists the commands, the README's among them."""
    p = run_shown(shown("make help"))
    assert p.returncode == 0, p.stderr
    for target in ("demo", "test", "run", "photos", "preflight", "compare", "firmware-path"):
        assert re.search(rf"\b{re.escape(target)}\b", p.stdout), f"make help does not list {target}:\n{p.stdout}"


def test_make_demo() -> None:
    """`make demo` prints what the README shows."""
    p = run_shown(shown("make demo"))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    want = output_after("make demo")
    assert want, "the README shows no output after make demo"
    assert matches_shown(p.stdout, want), f"make demo printed:\n{p.stdout}\nthe README shows:\n" + "\n".join(want)


def test_photo_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`make photos`, `make models` and RetinaFace on the astronaut, as the README shows them;
    the model fetched from a mirror of the team's copy on 127.0.0.1 into a cache of the test's
    own (CACHE=, MIRROR=: the same pins; tests/test_models_fetch.py tests the fetching)."""
    real = shared_models("real", "mnet.25-opt.param", "mnet.25-opt.bin")
    p = run_shown(shown("make photos"))
    assert p.returncode == 0, p.stderr
    assert (REPO / "build" / "photos" / "astronaut.ppm").exists()
    (tmp_path / "mirror" / "retinaface").mkdir(parents=True)
    for name in ("mnet.25-opt.param", "mnet.25-opt.bin"):
        shutil.copyfile(real / name, tmp_path / "mirror" / "retinaface" / name)
    cache = tmp_path / "cache"
    for var in ("no_proxy", "NO_PROXY"):  # (urllib would send 127.0.0.1 through a proxy the environment names)
        monkeypatch.setenv(var, "127.0.0.1")
    with serve_folder(tmp_path / "mirror") as mirror:
        p = run_shown(f"{shown('make models')} CACHE={cache} MIRROR={mirror.url}")
    assert p.returncode == 0 and p.stdout.splitlines()[-1] == str(cache / "retinaface"), p.stdout + p.stderr
    command = shown("make run SCRIPT=examples/retinaface_detect.py")
    (path_command,) = re.findall(r"\$\((python3 -m ncnn_mp_tools\.models path \w+)\)", command)
    p = run_shown(f"{path_command} --cache {cache}")
    assert p.returncode == 0, p.stderr
    folder = p.stdout.strip()
    p = run_shown(command, {f"$({path_command})": folder, "build/faces.png": str(tmp_path / "faces.png")})
    assert p.returncode == 0, p.stdout + p.stderr
    want = output_after(command)
    assert want and matches_shown(p.stdout, want), f"it printed:\n{p.stdout}\nthe README shows:\n" + "\n".join(want or [])
    assert (tmp_path / "faces.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---- the README's Python --------------------------------------------------------------------

def repl_chunks(lines: list[str]) -> list[tuple[str, list[str]]]:
    """A `pycon` block as (statement, the lines shown after it): '>>> ' starts a statement,
    '... ' continues it."""
    chunks: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(lines):
        assert lines[i].startswith(">>> "), f"README pycon block: expected '>>> ', got {lines[i]!r}"
        code = [lines[i][4:]]
        i += 1
        while i < len(lines) and (lines[i] == "..." or lines[i].startswith("... ")):
            code.append(lines[i][4:])
            i += 1
        out = []
        while i < len(lines) and not lines[i].startswith(">>> "):
            out.append(lines[i])
            i += 1
        chunks.append(("\n".join(code).rstrip() + "\n", out))
    return chunks


SEPARATOR = "--- end of statement ---"


def repl_script(chunks: list[tuple[str, list[str]]]) -> str:
    """A script that does what the REPL does with each statement: an expression's value is
    printed with repr unless None, an exception as a traceback's first and last lines."""
    lines = ["_g = {}",
             "def _run(src, expr):",
             "    try:",
             "        if expr:",
             "            r = eval(src, _g)",
             "            if r is not None:",
             "                print(repr(r))",
             "        else:",
             "            exec(src, _g)",
             "    except Exception as e:",
             "        print('Traceback (most recent call last):')",
             "        print('  ...')",
             "        print(type(e).__name__ + ': ' + str(e))"]
    for code, _ in chunks:
        try:
            ast.parse(code, mode="eval")
            expr = True
        except SyntaxError:
            expr = False
        lines += [f"_run({code!r}, {expr})", f"print({SEPARATOR!r})"]
    return "\n".join(lines) + "\n"


def python_blocks() -> list[tuple[Block, list[str] | None]]:
    """The README's `python` blocks, each with the `text` block right after it (its output)."""
    bs = blocks(README)
    return [(b, bs[i + 1].lines if i + 1 < len(bs) and bs[i + 1].lang == "text" else None)
            for i, b in enumerate(bs) if b.lang == "python"]


def board_script() -> str:
    """The README's script for the board (the python block reading from /rom)."""
    found = [b for b, _ in python_blocks() if any("/rom/" in ln for ln in b.lines)]
    assert len(found) == 1, f"{len(found)} python blocks of the README read /rom"
    return "\n".join(found[0].lines) + "\n"


def test_repl_session(micropython: MicroPython, digits_dir: Path, tmp_path: Path) -> None:
    """Each statement of the README's REPL session, on the Unix firmware from the checkout,
    prints what the README shows after it."""
    sessions = [b for b in blocks(README) if b.lang == "pycon"]
    assert sessions, "the README shows no REPL session"
    for b in sessions:
        chunks = repl_chunks(b.lines)
        source = repl_script(chunks).replace("build/models/digits", str(digits_dir))
        script = tmp_path / "session.py"
        script.write_text(source)
        r = micropython.run(script, cwd=REPO)
        assert r.returncode == 0, r.explain()
        got = r.stdout.split(SEPARATOR + "\n")
        assert len(got) == len(chunks) + 1, r.explain()
        for (code, want), out in zip(chunks, got):
            assert out.splitlines() == want, f"README line {b.line}: {code!r} printed {out!r}, the README shows {want}"


def test_python_snippets(micropython: MicroPython) -> None:
    """The README's Python (but the board's script) runs on the Unix firmware and prints the
    output the README shows after it."""
    ran = 0
    for b, want in python_blocks():
        if any("/rom/" in ln for ln in b.lines):
            continue  # test_model_on_a_board runs it on the board
        r = micropython.run_source("\n".join(b.lines) + "\n", cwd=REPO)
        assert r.returncode == 0, f"README line {b.line}:\n{r.explain()}"
        if want is not None:
            assert matches_shown(r.stdout, want), f"README line {b.line} printed:\n{r.stdout}\nthe README shows:\n" + \
                "\n".join(want)
        ran += 1
    assert ran, "the README shows no Python to run"


@pytest.mark.mcu
def test_model_on_a_board(tmp_path: Path) -> None:
    """"Put your model on a board", every command as the README shows it, with an ONNX CNN built
    by the test (tests/test_onnx_model.py's) and crops of scikit-image's photos: `make model`,
    run_board.py on the Cortex-M3 firmware sized to the models, `make compare` on the firmware
    sized to the fp32 model, and the README's own script, its weights in place."""
    from test_onnx_model import make_onnx, photo_crops

    make_onnx(tmp_path / "net.onnx")
    photo_crops(tmp_path / "photos")
    subs = {"net.onnx": str(tmp_path / "net.onnx"), "photos/": str(tmp_path / "photos"), "m": str(tmp_path / "m"),
            **{f"m/{name}": str(tmp_path / "m" / name) for name in
               ("net-int8.param", "net.param", "romfs.img", "run_board.py")}}

    p = run_shown(shown("make model PROFILE=qemu"), subs)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert re.search(r"the wheel against onnxruntime \S+: max \|diff\| \S+, relative \S+e-0[5-9]", p.stdout), p.stdout
    assert "measured on the 'qemu' firmware sized to the models" in p.stdout, p.stdout[-3000:]
    p = run_shown(shown("make run PROFILE=qemu"), subs)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert [line.split()[:2] for line in p.stdout.splitlines() if " out0 " in line] == \
        [["net-int8", "out0"], ["net", "out0"]], p.stdout
    p = run_shown(shown("make compare PROFILE=qemu"), subs)
    assert p.returncode == 0 and "no drift" in p.stdout, p.stdout[-3000:] + p.stderr[-3000:]
    assert "on the 'qemu' firmware sized to the models" in p.stdout, p.stdout
    (tmp_path / "mine.py").write_text(board_script())
    p = run_shown(shown("make run PROFILE=qemu").replace("m/run_board.py", "mine.py"),
                  {**subs, "mine.py": str(tmp_path / "mine.py")})
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    info = ast.literal_eval(p.stdout.strip().splitlines()[-1])
    assert info["copied"] == 0 and info["converted"] == 0 and info["in_place"] > 3000, info

# SPDX-License-Identifier: MIT
"""The one entry point that builds, demonstrates and checks ncnn_mp: `python3 -m ci.tool COMMAND`.

The Makefile's targets are the same commands (COMMANDS below, printed by `make help` and by
`python3 -m ci.tool --help`; tests/test_build_files.py keeps the two lists equal).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ci.common import REPO, SetupError, fail, say
from ci.testenv import digits_model, script_env


@dataclass(frozen=True)
class Command:
    name: str
    args: str  # what `make NAME` takes (VAR=value); the Makefile's line shows how they reach the tool
    help: str


# The one list of commands: `make NAME` and `python3 -m ci.tool NAME` for each.
COMMANDS = (
    Command("demo", "", "build the Unix firmware with ncnn_mp and run the digits demo (what plain `make` does)"),
    Command("test", "[PYTEST_ARGS=...]", "the whole test suite (pytest + mypy)"),
    Command("test-mcu", "[PYTEST_ARGS=...]",
            "only the tests on the bare-metal firmwares under QEMU (Cortex-M3, Cortex-M4F, RISC-V, Xtensa)"),
    Command("sanitize", "[PYTEST_ARGS=...]", "the MicroPython-side suite and the fuzzers' CI budgets under ASan + UBSan"),
    Command("fuzz-loader", "[CASES=100000] [SEED=1]", "the loader fuzzer: CASES mutated models"),
    Command("fuzz-api", "[SEQUENCES=20000] [SEED=1] [THREADS=1]",
            "the API-sequence fuzzer: SEQUENCES random call sequences; THREADS=3: 3 threads a process"),
    Command("fuzz-zoo", "[SEEDS=200] [TRIALS=10]",
            "the layer zoo: every layer type standalone, default and random parameters, TRIALS tries a type"),
    Command("soak", "[SECONDS=1800]", "a mixed workload for SECONDS: RSS and heap over time"),
    Command("mcu-report", '[ARGS="--models --board=xtensa ..."]',
            "the MCU figures: firmware size, memory, instructions per extract, every board side by side"),
    Command("mcu-text", "",
            "what ncnn_mp's messages and optional parts cost in flash: the Cortex-M3 firmware by error-text mode and switch"),
    Command("run", 'SCRIPT=f.py [ARGS="..."] [HEAP=16M] [ROMFS=romfs.img]',
            "run a MicroPython script on PROFILE's firmware (a QEMU board's: no ARGS, no HEAP; ROMFS= a flash image, or a folder "
            "to pack, at /rom)"),
    Command("py", 'SCRIPT=f.py [ARGS="..."]',
            "run a CPython script of the checkout (tests/bench, tests/fuzz) in the test venv, with the tests' imports"),
    Command("photos", "", "scikit-image's photos as PPM files in build/photos, for the examples"),
    Command("models", '[NAMES="squeezenet nanodet retinaface mnist"] [CACHE=dir] [MIRROR=url]',
            "the published models the examples use, pinned by sha256 in ncnn_mp_tools/models.toml, into "
            "~/.cache/ncnn_mp/models/NAME (no NAMES: all); prints their folders"),
    Command("preflight", 'MODELS="m.param m.bin" [SHAPES="data=160x160x3"] [SIZED=1] [FRAME=rgb565]',
            "will the models run on PROFILE's firmware: the layers they need, weights and memory, measured "
            "(on the firmware sized to them when PROFILE lacks a layer, or with SIZED=1); the arena an extract "
            "needs and the board's RAM budget (FRAME: inputs from a camera frame, straight to int8)"),
    Command("compare", 'MODELS="m.param m.bin" [SHAPES=...] [INPUT=x.npy|x.ppm] [TOL=1e-3] [LIMIT=n] '
            '[DEVICE_MODELS="d.param d.bin"] [SIZED=1]',
            "the model on PROFILE's firmware (sized to it as preflight's) vs the CPython wheel, every blob: "
            "the first layer that drifts"),
    Command("model", "MODEL=net.onnx IMAGES=dir [SHAPE=1,3,H,W] [OUT=dir] [PIXELS=rgb] [MEAN=0] [NORM=1/255] [CHAIN=0] [INT8_OUTPUTS=1]",
            "a model from ONNX (or ncnn's files) to PROFILE's board: fp32 and int8 ncnn files checked against "
            "onnxruntime, preflight, a ROMFS image, the firmware sized to it"),
    Command("bench-layers", "", "what a custom layer written in Python costs (Markdown tables)"),
    Command("bench-models", '[THREADS="1 2"]',
            "whole models: ncnn_mp vs the CPython wheel vs native ncnn, interleaved, at 1 and 2 threads"),
    Command("bench-binding", "",
            "what ncnn_mp adds to ncnn's C API per extract and per custom-layer call (callgrind instructions)"),
    Command("dist", "[DIST=folder]",
            "versioned files to take without building: the Unix and QEMU boards' firmwares, the tools, ncnn_mp_lib "
            "(.py, .mpy per architecture, package.json, mip index), SHA256SUMS, manifest.json (in dist/)"),
    Command("firmware", "[MODELS=...]", "build (or update) PROFILE's firmware, print its path"),
    Command("firmware-path", "", "print the path of PROFILE's built firmware"),
    Command("ncnn", "", "build (or reuse) PROFILE's ncnn, print its install prefix"),
    Command("ncnn-options", "", "PROFILE's ncnn CMake options (for building ncnn by hand)"),
    Command("venv", "", "create (or reuse) the test venv, print its python"),
    Command("help", "", "this list"),
)

HELP_HEAD = """\
ncnn_mp's commands: make COMMAND [VAR=value ...], or python3 -m ci.tool COMMAND [--profile NAME] [ARGS]
(the Makefile's line for a command shows how its VARs become the tool's arguments).
PROFILE=NAME (--profile NAME): a build profile from ci/profiles.toml (default unix). MODELS=... with
firmware, firmware-path, run, ncnn, ncnn-options (--models "..."): a firmware whose ncnn keeps exactly
the layers those models need (profiles with an ncnn_layers list: qemu, rv32, ...).
"""


def help_text() -> str:
    lines = [HELP_HEAD]
    for c in COMMANDS:
        left = f"  {c.name} {c.args}".rstrip()
        lines.append(f"{left:<24}{c.help}" if len(left) < 24 else f"{left}\n{'':<24}{c.help}")
    return "\n".join(lines) + "\n"


def setup(profile: str) -> tuple[Path, Path]:
    """Everything the demo and the tests need: system packages, venv, firmware."""
    from ci.firmware import build_firmware
    from ci.sources import ensure_debian_packages
    from ci.testenv import venv_python

    ensure_debian_packages()
    python = venv_python()
    return python, build_firmware(profile)


def run_demo(profile: str) -> int:
    python, fw = setup(profile)
    models = digits_model(python)
    say(f"running examples/digits_demo.py on {fw.name}")
    return subprocess.call([str(fw), str(REPO / "examples" / "digits_demo.py"), str(models)])


# pytest options that select tests: with one of them (or a file or folder named), a run
# that collects nothing is the user's filter matching nothing.
SELECTING = ("-k", "-m", "--keyword", "--deselect", "--ignore", "--ignore-glob", "--lf", "--last-failed")


def selects_tests(pytest_args: list[str]) -> bool:
    """The user's pytest arguments choose tests (-k, -m, a path, ...) rather than only
    changing how they run (-q, -x, -p no:cacheprovider, ...)."""
    for arg in pytest_args:
        if arg.startswith("-"):
            name = arg.split("=", 1)[0]
            if name in SELECTING or (name[:2] in ("-k", "-m") and not name.startswith("--")):
                return True
        elif (REPO / arg.split("::", 1)[0]).exists():
            return True
    return False


def no_tests_collected(rc: int, pytest_args: list[str]) -> int:
    """pytest's exit status 5 (no test collected): a failure when the run was the whole
    suite (make test, .ci/run: a suite that finds nothing has checked nothing), success
    with a note when the user's own selection matched nothing."""
    if rc != 5:
        return rc
    if selects_tests(pytest_args):
        say(f"pytest collected no tests: the selection {' '.join(pytest_args)!r} matched none")
        return 0
    say("pytest collected no tests from the whole suite: that is a failure")
    return rc


def run_tests(profile: str, pytest_args: list[str]) -> int:
    from ci.firmware import build_firmware

    python, fw = setup(profile)
    memcheck = build_firmware("memcheck")  # the MicroPython-side suite also runs under valgrind
    env = dict(os.environ, NCNN_MP_FIRMWARE=str(fw), NCNN_MP_FIRMWARE_MEMCHECK=str(memcheck),
               NCNN_MP_PROFILE=profile, NCNN_MP_DIGITS=str(digits_model(python)))
    say("running pytest")
    rc = no_tests_collected(subprocess.call([str(python), "-m", "pytest", *pytest_args], cwd=REPO, env=env),
                            pytest_args)
    say("running mypy (pyproject.toml's files: ncnn_mp.pyi, examples/, ncnn_mp_lib/, ncnn_mp_tools/, ci/)")
    rc_mypy = subprocess.call([str(python), "-m", "mypy"], cwd=REPO)
    return rc or rc_mypy


def run_script(profile: str, argv: list[str], heap: str | None, romfs: str | None = None,
               models: Sequence[Path] = ()) -> int:
    """Run one MicroPython script on the profile's firmware (ncnn_mp_tools/run.py: on QEMU for a
    bare-metal one), with the checkout's ncnn_mp_lib on a Unix firmware's path; a mistake is
    refused before the firmware is built."""
    from ci.firmware import target
    from ncnn_mp_tools.run import check, run

    image = Path(romfs) if romfs else None
    check(target(profile, models, build=False), argv, heap, image)
    # The checkout's ncnn_mp_lib (the examples import it) after the firmware's frozen modules and
    # before the Unix port's default folders (~/.micropython/lib, ...), unless the user set a path.
    path = os.environ.get("MICROPYPATH") or f".frozen:{REPO}:~/.micropython/lib:/usr/lib/micropython"
    return run(target(profile, models), argv, heap, image, micropypath=path)


PHOTOS = ("astronaut", "chelsea", "coffee")


def write_photos() -> int:
    """scikit-image's photos (in the test venv) as binary PPM files the examples read."""
    python, _ = setup("unix")
    folder = REPO / "build" / "photos"
    folder.mkdir(parents=True, exist_ok=True)
    code = ("import sys, skimage.data\n"
            "for name in sys.argv[2:]:\n"
            "    rgb = getattr(skimage.data, name)()\n"
            "    h, w = rgb.shape[:2]\n"
            "    open(f'{sys.argv[1]}/{name}.ppm', 'wb').write(b'P6\\n%d %d\\n255\\n' % (w, h) + rgb.tobytes())\n"
            "    print(f'{sys.argv[1]}/{name}.ppm')\n")
    return subprocess.call([str(python), "-c", code, str(folder), *PHOTOS])


def run_sanitized(pytest_args: list[str]) -> int:
    """The MicroPython-side suite and both fuzzers' CI budgets on the AddressSanitizer +
    UndefinedBehaviorSanitizer firmware (profile asan); a report fails the test it ends."""
    python, fw = setup("asan")
    env = dict(os.environ, NCNN_MP_FIRMWARE=str(fw), NCNN_MP_PROFILE="asan",
               NCNN_MP_DIGITS=str(digits_model(python)))
    tests = ["tests/test_mp_scripts.py", "tests/test_fuzz_loader.py", "tests/test_fuzz_api.py",
             "tests/test_oom.py", "tests/test_soak.py", "tests/test_interrupt.py",
             "tests/test_first_load_threads.py"]
    say("running the MicroPython-side suite and the fuzzers' CI budgets under ASan + UBSan")
    rc = subprocess.call([str(python), "-m", "pytest", *tests, "-m", "not mcu", "-k", "not valgrind",
                          *pytest_args], cwd=REPO, env=env)
    return no_tests_collected(rc, pytest_args)  # (the fixed file list is ours, not a user's selection)


def run_fuzzer(name: str, argv: list[str]) -> int:
    """tests/fuzz/<name>_fuzz.py with `argv`, on the Unix firmware (and the memcheck one, with
    which it classifies a crash under gdb), over the digits model and the team's models."""
    from ci.firmware import build_firmware

    python, fw = setup("unix")
    env = script_env(NCNN_MP_FIRMWARE=str(fw), NCNN_MP_FIRMWARE_MEMCHECK=str(build_firmware("memcheck")),
                     NCNN_MP_DIGITS=str(digits_model(python)))
    return subprocess.call([str(python), str(REPO / "tests" / "fuzz" / f"{name}_fuzz.py"), *argv], env=env)


def run_layer_zoo(profile: str, argv: list[str]) -> int:
    """tests/fuzz/layer_zoo.py for seeds 1..SEEDS, TRIALS tries a layer type, one process a seed;
    a seed whose process dies is named with the step it died in (the zoo's trace mode)."""
    from ci.common import is_board, profile as profile_settings
    from ci.firmware import build_firmware

    if is_board(profile_settings(profile)):
        fail("the layer zoo runs on a Unix firmware", "leave PROFILE out, or give unix, asan, memcheck")
    seeds, trials = (int(a) for a in (argv + ["200", "10"][len(argv):])[:2])
    fw = build_firmware(profile)
    failed = 0
    for seed in range(1, seeds + 1):
        p = subprocess.run([str(fw), "layer_zoo.py", str(seed), str(trials), "trace"], cwd=REPO / "tests" / "fuzz",
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, errors="replace")
        if p.returncode != 0:
            failed += 1
            print(f"seed {seed}: {(p.stdout.splitlines() or [''])[-1]}", flush=True)
    print(f"layer zoo: {seeds} seeds, {failed} died")
    return 1 if failed else 0


def run_bench_layers(profile: str) -> int:
    python, fw = setup(profile)
    return subprocess.call([str(python), str(REPO / "tests" / "bench" / "bench_layers.py"), str(fw)])


def native_bench(profile: str, name: str) -> Path:
    """tests/bench/native_bench.c built against the profile's libncnn.a and linked with the
    libraries the firmware links it with (with symbols: callgrind names its functions)."""
    from ci.common import profile as profile_settings
    from ci.ncnn_build import ncnn_prefix

    prefix = ncnn_prefix(profile)
    exe = REPO / "build" / name
    src = REPO / "tests" / "bench" / "native_bench.c"
    subprocess.run(["cc", "-O2", "-g", "-o", str(exe), str(src), f"-I{prefix}/include", f"{prefix}/lib/libncnn.a",
                    *profile_settings(profile)["link_libs"]], check=True)
    return exe


def run_bench_binding(profile: str) -> int:
    from ci.firmware import build_firmware

    python, fw = setup(profile)
    symbols = build_firmware("memcheck")  # the same code with symbols: where the instructions go
    exe = native_bench(profile, "native_bench_symbols")
    return subprocess.call([str(python), str(REPO / "tests" / "bench" / "binding_cost.py"), str(fw), str(symbols),
                            str(exe)])


def run_bench_models(profile: str, threads: list[str]) -> int:
    from ci.firmware import build_firmware

    python, fw = setup(profile)
    digits_model(python)
    plain = build_firmware("plain")  # the size baseline
    return subprocess.call([str(python), str(REPO / "tests" / "bench" / "bench_models.py"), str(fw), str(plain),
                            str(native_bench(profile, "native_bench")), *threads])


def run_command(name: str, profile: str, rest: list[str], heap: str | None, romfs: str | None = None,
                out: str | None = None, models: Sequence[Path] = ()) -> int:
    """One of COMMANDS; `rest` are its arguments (pytest's, the script's, the models, ...)."""
    if name == "demo":
        return run_demo(profile)
    if name == "test":
        return run_tests(profile, rest)
    if name == "test-mcu":
        return run_tests(profile, ["-m", "mcu", *rest])
    if name == "sanitize":
        return run_sanitized(rest)
    if name in ("fuzz-loader", "fuzz-api"):
        return run_fuzzer(name.removeprefix("fuzz-"), rest)
    if name == "fuzz-zoo":
        return run_layer_zoo(profile, rest)
    if name == "bench-layers":
        return run_bench_layers(profile)
    if name == "bench-binding":
        return run_bench_binding(profile)
    if name == "bench-models":
        return run_bench_models(profile, rest)
    if name in ("mcu-report", "mcu-text"):  # (tests/bench/mcu_report.py, mcu_text.py)
        python, _ = setup("qemu")
        script = REPO / "tests" / "bench" / f"{name.replace('-', '_')}.py"
        return subprocess.call([str(python), str(script), *rest], env=script_env())
    if name == "soak":
        python, fw = setup(profile)
        digits_model(python)
        return subprocess.call([str(python), str(REPO / "tests" / "soak" / "soak.py"), str(fw), *rest], env=script_env())
    if name == "run":
        return run_script(profile, rest, heap, romfs, models)
    if name == "py":
        from ci.testenv import venv_python

        if not rest:
            fail("py needs a script", 'make py SCRIPT=tests/bench/mcu_report.py [ARGS="..."]')
        return subprocess.call([str(venv_python()), *rest], env=script_env())
    if name == "photos":
        return write_photos()
    if name == "models":
        from ncnn_mp_tools.models import main as models_main
        return models_main(["fetch", *rest])
    if name == "preflight":
        from ci.device_tools import main as device_tools
        return device_tools([name, "--profile", profile, *rest])
    if name in ("compare", "model"):  # (under the venv's python: the wheel, numpy, onnx and pnnx are there)
        from ci.testenv import venv_python
        return subprocess.call([str(venv_python()), "-m", "ci.device_tools", name, "--profile", profile, *rest],
                               env=script_env())
    if name == "dist":
        from ci.dist import write_dist

        if profile != "unix":
            fail(f"make dist writes every board's firmware, not only PROFILE={profile}'s", "leave PROFILE out")
        if models:
            fail("make dist packs the profiles as ci/profiles.toml has them, not sized to MODELS",
                 "leave MODELS out (make firmware PROFILE=qemu MODELS=... builds a firmware of your own)")
        if rest:
            fail(f"dist takes no arguments but DIST=folder, not {' '.join(rest)}", "make dist [DIST=folder]")
        setup("unix")
        print(write_dist(root=Path(out).resolve() if out else None))
    elif name == "firmware":
        from ci.firmware import build_firmware
        print(build_firmware(profile, models))
    elif name == "firmware-path":
        from ci.firmware import firmware_path
        path = firmware_path(profile, models)
        if not path.exists():
            fail(f"no firmware built yet for profile '{profile}'", "run: make firmware")
        print(path)
    elif name == "ncnn-options":
        from ci.ncnn_build import cmake_options
        print(" ".join(cmake_options(profile, models)))
    elif name == "ncnn":
        from ci.ncnn_build import ncnn_prefix
        print(ncnn_prefix(profile, models=models))
    elif name == "venv":
        from ci.testenv import venv_python
        print(venv_python())
    elif name == "help":
        sys.stdout.write(help_text())
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(help_text())
        return 0 if argv else 2
    ap = argparse.ArgumentParser(prog="python3 -m ci.tool", add_help=False, allow_abbrev=False,
                                 usage="python3 -m ci.tool COMMAND [--profile NAME] [ARGS] (--help: the commands)")
    ap.add_argument("command", choices=[c.name for c in COMMANDS])
    ap.add_argument("--profile", default="unix")
    ap.add_argument("--heap", help="run: MicroPython's heap size (-X heapsize)")
    ap.add_argument("--romfs", help="run: a ROMFS image for a QEMU board's flash, mounted at /rom")
    ap.add_argument("--dist", help="dist: the folder to write ncnn_mp-<version>/ in (default dist/)")
    ap.add_argument("--models", help="firmware, firmware-path, run, ncnn, ncnn-options: the .param files (one "
                    "string, space-separated) the profile's firmware is sized to (make's MODELS=...)")
    args, rest = ap.parse_known_args(argv)
    models = [Path(m) for m in args.models.split()] if args.models else []
    for m in models if args.command != "dist" else []:  # (dist refuses MODELS itself)
        if not m.exists():
            print(f"ncnn_mp setup: MODELS names {m}, which does not exist: give the paths of your .param files",
                  file=sys.stderr)
            return 1
    try:
        return run_command(args.command, args.profile, rest, args.heap, args.romfs, args.dist, models)
    except SetupError as e:
        print(f"ncnn_mp setup: {e.what}: {e.todo}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ncnn_mp setup: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

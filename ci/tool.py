"""The one entry point that builds, demonstrates and checks ncnn_mp (the Makefile calls it).

    python3 ci/tool.py demo            fetch + build everything, run the digits demo
    python3 ci/tool.py test [ARGS]     fetch + build everything, run pytest (ARGS passed on) and mypy
    python3 ci/tool.py firmware        build (or update) the firmware, print its path
    python3 ci/tool.py run SCRIPT [ARGS]  run a MicroPython script on the firmware, arguments passed on
                                       (--profile qemu, rv32: under QEMU, no arguments); --heap SIZE
    python3 ci/tool.py photos          scikit-image's photos as PPM files in build/photos (for the examples)
    python3 ci/tool.py sanitize        the MicroPython-side suite and the fuzzers under ASan + UBSan
    python3 ci/tool.py soak SECONDS    the long mixed workload, RSS and heap over time (tests/soak)
    python3 ci/tool.py compare MODELS  one model on the firmware and in the CPython wheel, blob by blob (ci/compare.py)
    python3 ci/tool.py mcu-report      firmware size, memory and instructions per extract on the MCUs
    python3 ci/tool.py ncnn-options    the profile's ncnn CMake options (for building ncnn by hand)
    python3 ci/tool.py firmware-path   print the path of the built firmware
    python3 ci/tool.py bench-layers    what a Python custom layer costs (prints Markdown tables)
    python3 ci/tool.py bench-models    whole models: ncnn_mp vs the CPython wheel vs native ncnn
    python3 ci/tool.py bench-binding   what ncnn_mp adds to ncnn's C API per extract and per custom-layer call
    python3 ci/tool.py ncnn            build (or reuse) ncnn, print its install prefix
    python3 ci/tool.py venv            create (or reuse) the test venv, print its python

Every command takes --profile NAME (default unix; see ci/profiles.toml).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, SetupError, fail, say  # noqa: E402
from testenv import digits_model  # noqa: E402


def setup(profile: str) -> tuple[Path, Path]:
    """Everything the demo and the tests need: system packages, venv, firmware."""
    from firmware import build_firmware
    from sources import ensure_debian_packages
    from testenv import venv_python

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
    from firmware import build_firmware

    python, fw = setup(profile)
    memcheck = build_firmware("memcheck")  # the MicroPython-side suite also runs under valgrind
    env = dict(os.environ, NCNN_MP_FIRMWARE=str(fw), NCNN_MP_FIRMWARE_MEMCHECK=str(memcheck),
               NCNN_MP_PROFILE=profile, NCNN_MP_DIGITS=str(digits_model(python)))
    say("running pytest")
    rc = no_tests_collected(subprocess.call([str(python), "-m", "pytest", *pytest_args], cwd=REPO, env=env),
                            pytest_args)
    say("running mypy over ncnn_mp.pyi and examples/")
    rc_mypy = subprocess.call([str(python), "-m", "mypy", "ncnn_mp.pyi", "examples/"], cwd=REPO)
    return rc or rc_mypy


def run_script(profile: str, argv: list[str], heap: str | None, romfs: str | None = None) -> int:
    """Run one MicroPython script on the profile's firmware (on QEMU for a bare-metal one),
    with the given arguments (Unix) and MicroPython heap size, or a ROMFS image of one's own
    in the board's flash (a QEMU board: mounted at /rom instead of the tests' image)."""
    from firmware import build_firmware
    from common import is_board, profile as profile_settings

    if not argv:
        fail("run needs a script", "make run SCRIPT=path/to/script.py [ARGS=\"...\"] [HEAP=16M]")
    board = is_board(profile_settings(profile))
    if board and (len(argv) > 1 or heap):
        fail("a QEMU board's script takes no arguments and has the board's heap",
             "put what it needs in the script (or in the board's ROMFS)")
    if romfs and not board:
        fail("ROMFS= is for a QEMU board's flash", "give PROFILE=qemu (or rv32, qemu-m4f, xtensa)")
    if romfs and not Path(romfs).is_file():
        fail(f"ROMFS names {romfs}, which does not exist", "make one: python3 -m ncnn_mp_tools.romfs_pack -o romfs.img FILES")
    fw = build_firmware(profile)
    if board:
        import qemu

        r = qemu.run_script(profile, fw, Path(argv[0]).read_bytes(), romfs=Path(romfs) if romfs else None)
        sys.stdout.write(r.output)
        return r.returncode
    return subprocess.call([str(fw), *(["-X", f"heapsize={heap}"] if heap else []), *argv])


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
             "tests/test_oom.py", "tests/test_soak.py", "tests/test_interrupt.py"]
    say("running the MicroPython-side suite and the fuzzers' CI budgets under ASan + UBSan")
    rc = subprocess.call([str(python), "-m", "pytest", *tests, "-m", "not mcu", "-k", "not valgrind",
                          *pytest_args], cwd=REPO, env=env)
    return no_tests_collected(rc, pytest_args)  # (the fixed file list is ours, not a user's selection)


def run_bench_layers(profile: str) -> int:
    python, fw = setup(profile)
    return subprocess.call([str(python), str(REPO / "tests" / "bench" / "bench_layers.py"), str(fw)])


def native_bench(profile: str, name: str) -> Path:
    """tests/bench/native_bench.c built against the profile's libncnn.a and linked with the
    libraries the firmware links it with (with symbols: callgrind names its functions)."""
    from common import profile as profile_settings
    from ncnn_build import ncnn_prefix

    prefix = ncnn_prefix(profile)
    exe = REPO / "build" / name
    src = REPO / "tests" / "bench" / "native_bench.c"
    subprocess.run(["cc", "-O2", "-g", "-o", str(exe), str(src), f"-I{prefix}/include", f"{prefix}/lib/libncnn.a",
                    *profile_settings(profile)["link_libs"]], check=True)
    return exe


def run_bench_binding(profile: str) -> int:
    from firmware import build_firmware

    python, fw = setup(profile)
    symbols = build_firmware("memcheck")  # the same code with symbols: where the instructions go
    exe = native_bench(profile, "native_bench_symbols")
    return subprocess.call([str(python), str(REPO / "tests" / "bench" / "binding_cost.py"), str(fw), str(symbols),
                            str(exe)])


def run_bench_models(profile: str, threads: list[str]) -> int:
    from firmware import build_firmware

    python, fw = setup(profile)
    digits_model(python)
    plain = build_firmware("plain")  # the size baseline
    return subprocess.call([str(python), str(REPO / "tests" / "bench" / "bench_models.py"), str(fw), str(plain),
                            str(native_bench(profile, "native_bench")), *threads])


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="ci/tool.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["demo", "test", "bench-layers", "bench-models", "bench-binding", "mcu-report", "run",
                                        "soak", "sanitize", "ncnn-options", "firmware", "firmware-path", "ncnn", "venv",
                                        "preflight", "compare", "photos"])
    ap.add_argument("--profile", default="unix")
    ap.add_argument("--heap", help="run: MicroPython's heap size (-X heapsize)")
    ap.add_argument("--romfs", help="run: a ROMFS image for a QEMU board's flash, mounted at /rom")
    args, rest = ap.parse_known_args(argv)
    try:
        if args.command == "demo":
            return run_demo(args.profile)
        if args.command == "test":
            return run_tests(args.profile, rest)
        if args.command == "bench-layers":
            return run_bench_layers(args.profile)
        if args.command == "bench-binding":
            return run_bench_binding(args.profile)
        if args.command == "bench-models":
            return run_bench_models(args.profile, rest)
        if args.command == "mcu-report":
            python, _ = setup("qemu")
            return subprocess.call([str(python), str(REPO / "tests" / "bench" / "mcu_report.py")])
        if args.command == "sanitize":
            return run_sanitized(rest)
        if args.command == "soak":
            python, fw = setup(args.profile)
            digits_model(python)
            return subprocess.call([str(python), str(REPO / "tests" / "soak" / "soak.py"), str(fw), *rest])
        if args.command == "run":
            return run_script(args.profile, rest, args.heap, args.romfs)
        if args.command == "photos":
            return write_photos()
        if args.command == "preflight":
            from preflight import preflight
            return preflight(args.profile, rest)
        if args.command == "compare":  # (under the venv's python: the wheel and numpy are there)
            from testenv import venv_python
            return subprocess.call([str(venv_python()), str(REPO / "ci" / "compare.py"), "--profile", args.profile, *rest])
        if args.command == "firmware":
            from firmware import build_firmware
            print(build_firmware(args.profile))
        elif args.command == "firmware-path":
            from firmware import firmware_path
            path = firmware_path(args.profile)
            if not path.exists():
                fail(f"no firmware built yet for profile '{args.profile}'", "run: make firmware")
            print(path)
        elif args.command == "ncnn-options":
            from ncnn_build import cmake_options
            print(" ".join(cmake_options(args.profile)))
        elif args.command == "ncnn":
            from ncnn_build import ncnn_prefix
            print(ncnn_prefix(args.profile))
        elif args.command == "venv":
            from testenv import venv_python
            print(venv_python())
    except SetupError as e:
        print(f"ncnn_mp setup: {e.what}: {e.todo}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ncnn_mp setup: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

# SPDX-License-Identifier: MIT
"""picolibc built for the esp32core board (the windowed Xtensa core), with the board's compiler.

Debian's picolibc for Xtensa (picolibc-xtensa-lx106-elf) is built for the lx106's call0 ABI: linked
into windowed code it links without a word and crashes at the first call. So the C library is built
here from picolibc's source with clang 22 (ci/esp32core/bin/xtensa-esp32-clang, whose stdarg.h fixes
the compiler's varargs, so its printf family is built with the fix). Debian's picolibc source
package is not served by the archive this machine reaches (its tarball answers 404); PyPI carries the
source tree in the `pythondata-software-picolibc` wheel (LiteX's packaging of picolibc, 1.7.9 with its
later commits), pinned in ci/pins.toml [picolibc_source] by version and sha256.

The build: picolibc's own CMake, the board's toolchain file, tiny stdio (streams the port defines:
ci/xtensa/port/sim_port.c), errno and the like in plain .bss (no TLS: one thread), speed over size
(memcpy and the string functions word at a time). Its Xtensa string routines in assembly use GNU as
directives LLVM's assembler lacks (`.begin schedule`): they are left out, and picolibc's C versions
take their place (machine/xtensa/CMakeLists.txt, edited in the copy built). setjmp.S (windowed: it
has the register windows spilled through a SYSCALL, which ci/esp32core/port/startup.S answers) and
strcmp.S stay. The FPU's fenv functions (libm/machine/xtensa)
use GCC's inline-assembly constraint "a" (an address register), which clang calls "r": edited so in
the copy. Its tiny stdio's ungetc is atomic (ATOMIC_UNGETC, always on in its CMake build), through
functions of exchange.c and compare_exchange.c when the compiler has no 4-byte compare-and-swap
builtins (clang 22 for Xtensa defines none), files only picolibc's meson build lists: added to the
copy's CMake list (one thread here: their plain versions are right). Which core it is built for,
picolibc reads from <xtensa/config/core-isa.h> (ci/esp32core/include/). Cached by the pin and the
inputs' contents.
"""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

from ci.common import CI, PINS, cache_root, cmake_text, fail, key_of, locked, run, say
from ci.sources import checked

TOOLCHAIN = CI / "esp32core" / "esp32core.toolchain.cmake"
DRIVER = CI / "esp32core" / "bin" / "xtensa-esp32-clang"
# picolibc's Xtensa assembly that LLVM's assembler cannot take (see above).
GNU_AS_ONLY = ["memcpy.S", "memset.S", "strcpy.S", "strlen.S", "strncpy.S"]
OPTIONS = ["-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG",
           "-DCMAKE_ASM_FLAGS_RELEASE=-O2 -DNDEBUG", "-DPREFER_SIZE_OVER_SPEED=OFF", "-DPICOLIBC_TLS=OFF",
           "-DTESTS=OFF", "-D_WANT_IO_LONG_LONG=ON", "-DFORMAT_DEFAULT_DOUBLE=1", "-DFORMAT_DEFAULT_FLOAT=0",
           "-DFORMAT_DEFAULT_INTEGER=0"]


def _source() -> Path:
    """picolibc's source tree: the pinned wheel's data folder, unpacked in the cache."""
    pin = PINS["picolibc_source"]
    dl = cache_root() / "downloads"
    wheel = dl / pin["file"]
    with locked(dl / "picolibc.lock", "picolibc's source"):
        if not wheel.exists():
            say(f"downloading picolibc {pin['version']} source (PyPI {pin['package']}, ~8 MB)")
            tmp = dl / "picolibc.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            run(["python3", "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-d", tmp,
                 f"{pin['package']}=={pin['version']}"],
                "downloading picolibc's source with pip failed", "check that PyPI is reachable (pip config) and retry",
                log=cache_root() / "logs" / "picolibc-download.log")
            (tmp / pin["file"]).rename(wheel)
            shutil.rmtree(tmp)
        checked(wheel, pin["sha256"], "PyPI")
        dest = cache_root() / "src" / f"picolibc-{pin['version']}"
        if not (dest / ".unpacked").exists():
            say(f"unpacking {wheel.name}")
            tmp = dest.with_name(dest.name + ".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            with zipfile.ZipFile(wheel) as z:
                z.extractall(tmp)
            shutil.rmtree(dest, ignore_errors=True)
            (tmp / pin["tree"]).rename(dest)
            shutil.rmtree(tmp)
            (dest / ".unpacked").touch()
        return dest


def picolibc(build: bool = True) -> Path:
    """The install prefix (include/, lib/libc.a) of picolibc for the esp32core board (with
    build=False, only where it would be)."""
    headers = sorted((CI / "esp32core" / "include").rglob("*.h"))  # (stdarg.h, xtensa/config/core-isa.h)
    key = key_of(PINS["picolibc_source"]["sha256"], OPTIONS, GNU_AS_ONLY, cmake_text(TOOLCHAIN), DRIVER.read_text(),
                 [h.read_text() for h in headers], Path(__file__).read_text())
    root = cache_root() / "picolibc-esp32core" / key
    prefix = root / "install"
    if not build:
        return prefix
    with locked(root.parent / f"{key}.lock", "picolibc for esp32core"):
        if (root / ".done").exists():
            return prefix
        src = _source()
        shutil.rmtree(root, ignore_errors=True)
        tree = root / "src"
        shutil.copytree(src, tree, symlinks=True)
        machine = tree / "newlib" / "libc" / "machine" / "xtensa" / "CMakeLists.txt"
        text = machine.read_text()
        for name in GNU_AS_ONLY:
            if f"  {name}\n" not in text:
                fail(f"picolibc's {machine.relative_to(tree)} no longer lists {name}",
                     "update GNU_AS_ONLY in ci/picolibc.py")
            text = text.replace(f"  {name}\n", "")
        machine.write_text(text)
        stdio = tree / "newlib" / "libc" / "tinystdio" / "CMakeLists.txt"
        stdio.write_text(stdio.read_text() + "\npicolibc_sources(exchange.c compare_exchange.c)\n")
        for fenv in sorted((tree / "newlib" / "libm" / "machine" / "xtensa").glob("*.c")):
            fenv.write_text(fenv.read_text().replace('"=a"(', '"=r"(').replace('"a"(', '"r"('))
        logs = cache_root() / "logs"
        say("building picolibc for esp32core with clang 22 (about 3 minutes on 2 cores; cached after)")
        run(["cmake", "-S", tree, "-B", root / "build", f"-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN}",
             f"-DCMAKE_INSTALL_PREFIX={prefix}", *OPTIONS],
            "configuring picolibc failed", "see the log", log=logs / "picolibc-esp32core-configure.log")
        run(["cmake", "--build", root / "build", "-j", str(os.cpu_count() or 2)], "building picolibc failed",
            "see the log (a clang crash there is a compiler bug: ci/esp32core/bin/xtensa-esp32-clang works around two)",
            log=logs / "picolibc-esp32core-build.log", progress=r"^\[\s*\d+%\]")
        run(["cmake", "--install", root / "build"], "installing picolibc into the cache failed", "see the log",
            log=logs / "picolibc-esp32core-install.log")
        if not (prefix / "lib" / "libc.a").exists():
            fail(f"picolibc's install in {prefix} has no lib/libc.a", "see ci/picolibc.py")
        shutil.rmtree(root / "build")
        shutil.rmtree(tree)
        (root / ".done").touch()
        return prefix

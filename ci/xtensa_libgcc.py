"""The libgcc routines Debian's lx106 libgcc.a lacks, built for the xtensa profile.

Debian's gcc-xtensa-lx106 is built for the ESP8266, whose ROM holds the integer division,
the soft-float arithmetic and conversions and a few 64-bit routines: its libgcc.a leaves them
out (22 of them, `__divsi3`, `__udivsi3`, `__umulsidi3`, `__addsf3`, `__mulsf3`, `__adddf3`,
`__fixdfsi`, `__muldi3`, `__udivdi3`, ...), and nothing that divides, prints or uses a float links
without them. They are assembled here from GCC 12.2's own libgcc/config/xtensa/lib1funcs.S
(which includes ieee754-sf.S and ieee754-df.S; the pinned Debian package gcc-12-source, the
compiler's version) with the lx106 configuration (ci/xtensa/xtensa-config.h), one object per
routine group as libgcc's own build makes them (-DL_<name>); a group is kept only when every
symbol it defines is missing from Debian's libgcc.a (so the two archives never define the same
symbol). The 64-bit division and multiply are C (ci/xtensa/libgcc64.c). The archive is cached by
the pin and the inputs' contents.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from ci.common import CI, PINS, cache_root, fail, key_of, locked, say
from ci.sources import debian_pool_file

CC = "xtensa-lx106-elf-gcc"
FLAGS = ["-mlongcalls", "-mtext-section-literals", "-O2", "-ffunction-sections"]
# libgcc's t-xtensa: the routine groups lib1funcs.S holds.
GROUPS = ["_mulsi3", "_divsi3", "_modsi3", "_udivsi3", "_umodsi3", "_umulsidi3", "_clz", "_clzsi2", "_ctzsi2",
          "_ffssi2", "_ashldi3", "_ashrdi3", "_lshrdi3", "_bswapsi2", "_bswapdi2", "_negsf2", "_addsubsf3", "_mulsf3",
          "_divsf3", "_cmpsf2", "_fixsfsi", "_fixsfdi", "_fixunssfsi", "_fixunssfdi", "_floatsisf", "_floatunsisf",
          "_sqrtf", "_recipsf2", "_rsqrtsf2", "_floatdisf", "_floatundisf", "_negdf2", "_addsubdf3", "_muldf3",
          "_divdf3", "_cmpdf2", "_fixdfsi", "_fixdfdi", "_fixunsdfsi", "_fixunsdfdi", "_floatsidf", "_floatunsidf",
          "_floatdidf", "_floatundidf", "_truncdfsf2", "_extendsfdf2", "_sqrt", "_recipdf2", "_rsqrtdf2"]
# What GCC's code generation calls and Debian's libgcc.a must not lack once this archive is linked.
NEEDED = ["__divsi3", "__udivsi3", "__umodsi3", "__umulsidi3", "__addsf3", "__subsf3", "__mulsf3", "__adddf3",
          "__subdf3", "__muldf3", "__divdf3", "__fixdfsi", "__fixunsdfsi", "__fixunssfsi", "__floatsisf",
          "__floatunsisf", "__floatsidf", "__floatunsidf", "__truncdfsf2", "__extendsfdf2", "__muldi3", "__divdi3",
          "__udivdi3", "__umoddi3"]
SOURCES = ["lib1funcs.S", "ieee754-sf.S", "ieee754-df.S"]


def _defined(obj: Path) -> set[str]:
    out = subprocess.run(["xtensa-lx106-elf-nm", "--defined-only", "-g", str(obj)], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if re.match(r"^\S+ [TDBR] ", line)}


def _gcc_xtensa_sources(dest: Path) -> None:
    """libgcc/config/xtensa/{lib1funcs,ieee754-sf,ieee754-df}.S from the pinned gcc-12-source."""
    pin = PINS["gcc_source"]
    deb = debian_pool_file(pin, f"GCC {pin['debian_version']} source (Debian {pin['debian_package']}, ~83 MB)")
    say("unpacking libgcc's Xtensa assembly from GCC's source")
    members = {f"{pin['top']}/libgcc/config/xtensa/{name}": name for name in SOURCES}
    # A .deb is an ar archive; its data.tar.xz holds the upstream tarball.
    with tempfile.TemporaryDirectory() as tmp:
        data = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True, check=True).stdout
        (Path(tmp) / "data.tar").write_bytes(data)
        with tarfile.open(Path(tmp) / "data.tar") as outer:
            inner = outer.extractfile("./" + pin["tarball"])
            if inner is None:
                fail(f"{deb.name} holds no {pin['tarball']}", "the pin in ci/pins.toml [gcc_source] is wrong")
            with tarfile.open(fileobj=inner, mode="r|xz") as src:
                for member in src:
                    if member.name in members:
                        f = src.extractfile(member)
                        assert f is not None
                        (dest / members[member.name]).write_bytes(f.read())
    missing = [name for name in SOURCES if not (dest / name).exists()]
    if missing:
        fail(f"GCC's source lacks {', '.join(missing)}", "the pin in ci/pins.toml [gcc_source] is wrong")


def archive() -> Path:
    """The archive of the missing routines (built once, cached): link it before -lgcc."""
    libgcc = Path(subprocess.run([CC, "-print-libgcc-file-name"], capture_output=True, text=True,
                                 check=True).stdout.strip())
    inputs = [(CI / "xtensa" / name).read_text() for name in ("xtensa-config.h", "libgcc64.c")]
    key = key_of(PINS["gcc_source"]["sha256"], FLAGS, inputs, Path(__file__).read_text(), libgcc.stat().st_size)
    root = cache_root() / "libgcc-lx106" / key
    lib = root / "libgcc-extra.a"
    with locked(root.parent / f"{key}.lock", "the lx106 libgcc routines"):
        if lib.exists():
            return lib
        shutil.rmtree(root, ignore_errors=True)
        src = root / "src"
        src.mkdir(parents=True)
        _gcc_xtensa_sources(src)
        shutil.copy(CI / "xtensa" / "xtensa-config.h", src / "xtensa-config.h")
        have = _defined(libgcc)
        objs, provided = [], set()
        for group in GROUPS:
            obj = root / f"{group}.o"
            subprocess.run([CC, *FLAGS, f"-DL{group}", "-I", str(src), "-c", "-o", str(obj),
                            str(src / "lib1funcs.S")], check=True)
            defined = _defined(obj)
            if defined and not defined & have:
                objs.append(obj)
                provided |= defined
        obj = root / "libgcc64.o"
        subprocess.run([CC, *FLAGS, "-Wall", "-c", "-o", str(obj), str(CI / "xtensa" / "libgcc64.c")], check=True)
        objs.append(obj)
        provided |= _defined(obj)
        lacking = sorted(set(NEEDED) - provided - have)
        if lacking:
            fail(f"the lx106 libgcc routines lack {', '.join(lacking)}", "see ci/xtensa_libgcc.py")
        subprocess.run(["xtensa-lx106-elf-ar", "rcs", str(lib), *map(str, objs)], check=True)
        say(f"lx106 libgcc routines: {len(objs)} objects, {len(provided)} symbols: {lib}")
        return lib

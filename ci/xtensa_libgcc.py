# SPDX-License-Identifier: MIT
"""libgcc's Xtensa routines, built from GCC's source for the two Xtensa sim boards.

- xtensa (lx106): Debian's gcc-xtensa-lx106 is built for the ESP8266, whose ROM holds the integer
  division, the soft-float arithmetic and conversions and a few 64-bit routines: its libgcc.a
  leaves them out (22 of them, `__divsi3`, `__udivsi3`, `__umulsidi3`, `__addsf3`, `__mulsf3`,
  `__adddf3`, `__fixdfsi`, `__muldi3`, `__udivdi3`, ...), and nothing that divides, prints or uses a
  float links without them. A group is kept only when every symbol it defines is missing from
  Debian's libgcc.a (so the two archives never define the same symbol).
- esp32core (the windowed de233_fpu core, clang 22): there is no libgcc for the windowed ABI at all
  (Debian's is call0, and clang has no Xtensa compiler-rt here): every group is built, for this
  core's options (ci/esp32core/include/xtensa/config/core-isa.h: FPU, DIV32, loops; no MUL32_HIGH), and the 64-bit
  division and multiply in C (ci/esp32core/libgcc64.c). clang's double arithmetic calls them
  (`__adddf3`, `__muldf3`, ...: the ESP32's FPU is single precision).

Both assemble GCC 12.2's own libgcc/config/xtensa/lib1funcs.S (which includes ieee754-sf.S and
ieee754-df.S; the pinned Debian package gcc-12-source, the lx106 compiler's version), one object per
routine group as libgcc's own build makes them (-DL<group>). LLVM's assembler is stricter than GNU
as (see _for_llvm_mc). The archive is cached by the pin and the inputs' contents.
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
ESP32CORE_BIN = CI / "esp32core" / "bin"
# Per board: the compiler, its flags, the core's configuration, the 64-bit C routines, the tools.
BOARDS = {
    "lx106": {"cc": ["xtensa-lx106-elf-gcc", "-mlongcalls", "-mtext-section-literals", "-O2", "-ffunction-sections"],
              "config": CI / "xtensa" / "xtensa-config.h", "c64": CI / "xtensa" / "libgcc64.c",
              "nm": "xtensa-lx106-elf-nm", "ar": "xtensa-lx106-elf-ar"},
    "esp32core": {"cc": [str(ESP32CORE_BIN / "xtensa-esp32-clang"), "-O2", "-ffunction-sections",
                         "-ffreestanding", "-D__XTENSA_WINDOWED_ABI__"],
                  "config": CI / "esp32core" / "include" / "xtensa" / "config" / "core-isa.h",
                  "c64": CI / "esp32core" / "libgcc64.c",
                  "nm": "llvm-nm-22", "ar": "llvm-ar-22"},
}
# The conditional branches and their inverses (an out-of-range one becomes the inverse over a `j`).
_INVERSE = {"beq": "bne", "blt": "bge", "bltu": "bgeu", "beqz": "bnez", "bltz": "bgez", "beqi": "bnei",
            "blti": "bgei", "bltui": "bgeui", "bany": "bnone", "ball": "bnall", "bbc": "bbs", "bbci": "bbsi"}
_INVERSE |= {v: k for k, v in _INVERSE.items()}


def _defined(obj: Path, nm: str = "xtensa-lx106-elf-nm") -> set[str]:
    out = subprocess.run([nm, "--defined-only", "-g", str(obj)], capture_output=True, text=True,
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


def _for_llvm_mc(text: str) -> str:
    """What GNU as accepts and LLVM's Xtensa assembler does not, in lib1funcs.S's preprocessed text:
    the `.l` forms of the bit branches (bit numbers counted from the little end: the same on this
    little-endian core), and `srli` by 16..31 (GNU as turns it into `extui`; the amount may be an
    expression, e.g. `24 - 9`)."""
    text = re.sub(r"\b(bb[cs]i)\.l\b", r"\1", text)

    def srli(m: re.Match[str]) -> str:
        n = sum(int(term) for term in re.findall(r"[+-]?\d+", m.group(3).replace(" ", "")))  # (a sum: 24 - 9)
        dst, src = m.group(1), m.group(2)
        return f"srli\t{dst}, {src}, {n}" if n < 16 else f"extui\t{dst}, {src}, {n}, {32 - n}"

    return re.sub(r"srli\s+(\w+),\s*(\w+),\s*([0-9 +\-]+)$", srli, text, flags=re.M)


def _assemble_llvm(cc: list[str], group: str, src: Path, obj: Path) -> None:
    """One routine group through the esp32core board's compiler (preprocessing) and llvm-mc. GNU as
    relaxes a conditional branch whose target is out of its reach (+-128 bytes for most) into the
    inverse branch over a `j`; llvm-mc fails: each one it names is rewritten so, and assembled again."""
    pre = subprocess.run([*cc, "-E", "-P", f"-DL{group}", "-I", str(src), str(src / "lib1funcs.S")],
                         capture_output=True, text=True, check=True).stdout
    lines = _for_llvm_mc(pre).split("\n")
    asm = obj.with_suffix(".s")
    for relaxed in range(100):
        asm.write_text("\n".join(lines))
        r = subprocess.run(["llvm-mc-22", "-triple=xtensa", "-mcpu=esp32", "-filetype=obj", "-o", str(obj), str(asm)],
                           capture_output=True, text=True)
        if r.returncode == 0:
            return
        out_of_range = rf"{re.escape(asm.name)}:(\d+):\d+: error: fixup value out of range"
        far = sorted({int(n) for n in re.findall(out_of_range, r.stderr)}, reverse=True)
        if not far:
            fail(f"assembling libgcc's {group} for esp32core failed: {r.stderr.strip()[:500]}",
                 "see ci/xtensa_libgcc.py")
        for n in far:
            m = re.match(r"\s*(\w+)\s+(.*),\s*(\S+)\s*$", lines[n - 1])
            if not m or m.group(1) not in _INVERSE:
                fail(f"libgcc's {group}: cannot relax `{lines[n - 1].strip()}`", "see ci/xtensa_libgcc.py")
            label = f".Lrelax_{relaxed}_{n}"
            lines[n - 1:n] = [f"\t{_INVERSE[m.group(1)]}\t{m.group(2)}, {label}", f"\tj\t{m.group(3)}", f"{label}:"]
    fail(f"libgcc's {group}: branches still out of range", "see ci/xtensa_libgcc.py")


def archive(board: str = "lx106") -> Path:
    """The board's archive of libgcc's routines (built once, cached): link it before -lgcc (lx106)
    or as the only libgcc (esp32core)."""
    conf = BOARDS[board]
    cc = conf["cc"]
    assert isinstance(cc, list)
    config, c64 = Path(str(conf["config"])), Path(str(conf["c64"]))
    nm, ar = str(conf["nm"]), str(conf["ar"])
    libgcc = None
    if board == "lx106":
        libgcc = Path(subprocess.run([cc[0], "-print-libgcc-file-name"], capture_output=True, text=True,
                                     check=True).stdout.strip())
    inputs = [p.read_text() for p in (config, c64)]
    if board == "esp32core":
        inputs.append((ESP32CORE_BIN / "xtensa-esp32-clang").read_text())
    key = key_of(PINS["gcc_source"]["sha256"], cc[1:], inputs, Path(__file__).read_text(),
                 libgcc.stat().st_size if libgcc else 0)
    root = cache_root() / f"libgcc-{board}" / key
    lib = root / "libgcc-extra.a"
    with locked(root.parent / f"{key}.lock", f"the {board} libgcc routines"):
        if lib.exists():
            return lib
        shutil.rmtree(root, ignore_errors=True)
        src = root / "src"
        src.mkdir(parents=True)
        _gcc_xtensa_sources(src)
        shutil.copy(config, src / "xtensa-config.h")
        have = _defined(libgcc) if libgcc else set()
        objs, provided = [], set()
        for group in GROUPS:
            obj = root / f"{group}.o"
            if board == "lx106":
                subprocess.run([*cc, f"-DL{group}", "-I", str(src), "-c", "-o", str(obj), str(src / "lib1funcs.S")],
                               check=True)
            else:
                _assemble_llvm(cc, group, src, obj)
            defined = _defined(obj, nm)
            if defined and not defined & have:
                objs.append(obj)
                provided |= defined
        obj = root / "libgcc64.o"
        subprocess.run([*cc, "-Wall", "-c", "-o", str(obj), str(c64)], check=True)
        objs.append(obj)
        provided |= _defined(obj, nm)
        lacking = sorted(set(NEEDED) - provided - have)
        if lacking:
            fail(f"the {board} libgcc routines lack {', '.join(lacking)}", "see ci/xtensa_libgcc.py")
        subprocess.run([ar, "rcs", str(lib), *map(str, objs)], check=True)
        say(f"{board} libgcc routines: {len(objs)} objects, {len(provided)} symbols: {lib}")
        return lib

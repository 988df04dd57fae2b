# SPDX-License-Identifier: MIT
"""The microcontroller figures (make mcu-report): firmware size, memory and inference cost
of ncnn_mp on the bare-metal QEMU firmwares, Cortex-M3 (MPS2-AN385), RISC-V rv32imac
(virt), the hard-float Cortex-M4F (MPS2-AN386, qemu-m4f*), Xtensa lx106 and the ESP32's windowed
core with its FPU (esp32core), printed as Markdown tables.

- Size: text/data/bss of MicroPython's qemu firmware without ncnn_mp (profiles qemu-plain,
  rv32-plain) and with it (qemu and rv32: ncnn with names; qemu-nostring and rv32-nostring:
  NCNN_STRING=OFF, fewer layers), and where the text of the ncnn_mp firmwares comes from, read from the
  linker maps.
- Per model (tests/bench/mcu_bench.py on the board): emulated instructions per extract
  (QEMU -icount), ncnn's C heap (in use, and the most ever taken from the system),
  the MicroPython heap live with the model loaded and allocated per extract.
- Real models (ncnn_mp_tools/probes/preflight_probe.py on each board, a fresh boot each): weights copied into
  RAM, fp32 in place in flash, int8 in place, side by side: flash, RAM, instructions, the
  model's multiply-accumulates (tests/bench/model_macs.py) and instructions per MAC.

    make mcu-report [ARGS="[--models] [--only=RetinaFace ...] [--board=xtensa ...]"]

(--models: only the real models' table; --only: only its rows whose model and precision
contain one of the given strings; --board: only those boards' rows.)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from ci.common import REPO, profile
from ci.firmware import build_firmware, target
from ci.qemu import run_script
from ncnn_mp_tools.preflight import probe

PROFILES = ["qemu-plain", "qemu", "qemu-nostring", "rv32-plain", "rv32", "rv32-nostring", "qemu-m4f-plain", "qemu-m4f",
            "xtensa-plain", "xtensa", "esp32core-plain", "esp32core"]
WITH_NCNN = ["qemu", "qemu-nostring", "rv32", "rv32-nostring", "qemu-m4f", "xtensa", "esp32core"]
BOARDS = ["qemu", "rv32", "qemu-m4f", "xtensa", "esp32core"]  # one firmware a board, with the same ncnn options
PLAIN = {"qemu": "qemu-plain", "qemu-nostring": "qemu-plain", "rv32": "rv32-plain", "rv32-nostring": "rv32-plain",
         "qemu-m4f": "qemu-m4f-plain", "xtensa": "xtensa-plain", "esp32core": "esp32core-plain"}


def size(profile_name: str, elf: Path) -> tuple[int, int, int]:
    """text, data, bss by the profile's own binutils (arm-none-eabi-size, riscv64-unknown-elf-size; LLVM's
    for the boards clang builds)."""
    cc = profile(profile_name)["cc"]
    tool = "llvm-size-22" if cc.startswith("clang") else cc.removesuffix("gcc") + "size"
    out = subprocess.run([tool, str(elf)], capture_output=True, text=True, check=True).stdout
    text, data, bss = (int(v) for v in out.splitlines()[1].split()[:3])
    return text, data, bss


def part_of(path: str) -> str:
    if "libncnn.a" in path:
        return "ncnn (libncnn.a)"
    if re.search(r"lib(stdc\+\+|supc\+\+|c|m|g|gcc|gcc-extra|nosys)\.a", path):
        return "C/C++ runtime (newlib + libstdc++, or picolibc; libgcc)"
    if "/ncnn_mp/ncnn_mp/kernels/" in path:
        return "ncnn_mp kernels (kernel_*.cpp, NCNN_MP_KERNELS)"
    if "/ncnn_mp/ncnn_mp/" in path:
        return "ncnn_mp (the binding)"
    if ("/ci/mcu/" in path or "/ci/rv32/" in path or "/ci/xtensa/" in path or "sim_port" in path or "startup.o" in path
            or "gccollect.o" in path or "compiler_checks.o" in path):
        return "board glue (ci/mcu/, ci/rv32/, ci/xtensa/, ci/esp32core/)"
    if "frozen_content" in path:
        return "frozen Python and test files"
    return "MicroPython"


def text_by_part(elf: Path) -> dict[str, int]:
    """Bytes of .text/.rodata/.ARM.* each input file put into the firmware (the map's
    memory-map half: discarded sections are listed before it)."""
    lines = (elf.with_suffix(".map")).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Linker script and memory map"))
    parts: dict[str, int] = defaultdict(int)
    section = ""
    for line in lines[start:]:
        m = re.match(r"^ (\.\S+)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+))?\s*$", line)
        if m:
            section = m.group(1)
            if m.group(4):
                parts[part_of(m.group(4))] += int(m.group(3), 16) if _counted(section) else 0
            continue
        m = re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)\s*$", line)
        if m and section and _counted(section):
            parts[part_of(m.group(3))] += int(m.group(2), 16)
    return dict(parts)


def _counted(section: str) -> bool:
    return section.startswith((".text", ".rodata", ".srodata", ".ARM.ex", ".init_array"))


def main() -> int:
    if "--models" in sys.argv:  # only the real models' table (a quicker run)
        chosen = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--board=")] or BOARDS
        return real_models({p: build_firmware(p) for p in BOARDS if p in chosen})
    elves = {p: build_firmware(p) for p in PROFILES}
    sizes = {p: size(p, elves[p]) for p in PROFILES}
    print("### Firmware size (bytes; qemu*: MPS2-AN385 Cortex-M3, rv32*: virt rv32imac, qemu-m4f*: MPS2-AN386 "
          "Cortex-M4F; -Os; ncnn MinSizeRel)\n")
    print("| firmware | text | data | bss | text more than plain |")
    print("|---|---:|---:|---:|---:|")
    for p in PROFILES:
        t, d, b = sizes[p]
        more = f"{t - sizes[PLAIN[p]][0]:,}" if p in PLAIN else ""
        print(f"| {p} | {t:,} | {d:,} | {b:,} | {more} |")
    parts = {p: text_by_part(elves[p]) for p in WITH_NCNN}
    names = sorted({n for pp in parts.values() for n in pp}, key=lambda n: -max(pp.get(n, 0) for pp in parts.values()))
    print("\nWhere the text comes from (text + rodata, from the linker maps):\n")
    print("| part | " + " | ".join(WITH_NCNN) + " |")
    print("|---|" + "---:|" * len(WITH_NCNN))
    for name in names:
        print(f"| {name} | " + " | ".join(f"{parts[p].get(name, 0):,}" for p in WITH_NCNN) + " |")

    bench = (REPO / "tests" / "bench" / "mcu_bench.py").read_bytes()
    print("\n### Per extract, under QEMU -icount (one emulated instruction per ns)\n")
    print("| firmware | model | instructions | ncnn heap in use | ncnn heap peak | Python heap live | Python heap / extract |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for p in WITH_NCNN:
        r = run_script(p, elves[p], bench, timeout=600, icount=True)
        if r.returncode != 0:
            print(f"mcu_bench.py failed on {p}:\n{r.output}", file=sys.stderr)
            return 1
        for line in r.output.splitlines():
            m = json.loads(line)
            print(f"| {p} | {m['model']} | {m['instructions']:,} | {m['c_heap_in_use']:,} | "
                  f"{m['c_heap_peak']:,} | {m['py_heap_live']:,} | {m['py_heap_per_extract']:,} |")
    print("\nMicroPython's heap is 143,360 bytes (the port's default) on both boards; ncnn's heap is the RAM"
          " between .bss and the stack of the board's 4 MiB (ci/mcu/mps2_an385.ld, ci/rv32/virt.ld). Heap"
          " figures in bytes.")
    return real_models({p: elves[p] for p in BOARDS})


def real_models(elves: dict[str, Path]) -> int:
    """fp32 copied, fp32 in place, int8 in place and int8 between layers ("int8 chain") for
    MNIST, RetinaFace and NanoDet (tests/real_models.py)."""
    import tempfile

    from real_models import (NANODET_SIDE, SIZE, mnist_int8, nanodet_int8, nanodet_model, retinaface_models,
                             shared_models)

    from model_macs import count_macs

    mnist = shared_models("mnist", "mnist.param", "mnist.bin")
    with tempfile.TemporaryDirectory() as tmp:
        retina = retinaface_models(Path(tmp))
        (Path(tmp) / "m").mkdir()
        mnist8 = mnist_int8(Path(tmp) / "m")
        mnist8c = mnist_int8(Path(tmp) / "m", chain=True)
        nanodet = nanodet_model(Path(tmp) / "m")
        nanodet8 = nanodet_int8(Path(tmp) / "m", nanodet)
        # (tests/test_mcu_models.py's coffee photo letterboxed: 160x107, padded to 160x128.)
        nanodet_shape = (NANODET_SIDE, NANODET_SIDE * 4 // 5, 3)
        runs = [("MNIST 28x28", "fp32", True, (mnist / "mnist.param", mnist / "mnist.bin"), ("data", (28, 28, 1))),
                ("MNIST 28x28", "fp32", False, (mnist / "mnist.param", mnist / "mnist.bin"), ("data", (28, 28, 1))),
                ("MNIST 28x28", "int8", False, mnist8, ("data", (28, 28, 1))),
                ("MNIST 28x28", "int8 chain", False, mnist8c, ("data", (28, 28, 1))),
                (f"RetinaFace mnet.25 {SIZE}x{SIZE}", "fp32", True, retina["fp32"], ("data", (SIZE, SIZE, 3))),
                (f"RetinaFace mnet.25 {SIZE}x{SIZE}", "fp32", False, retina["fp32"], ("data", (SIZE, SIZE, 3))),
                (f"RetinaFace mnet.25 {SIZE}x{SIZE}", "int8", False, retina["int8"], ("data", (SIZE, SIZE, 3))),
                (f"RetinaFace mnet.25 {SIZE}x{SIZE}", "int8 chain", False, retina["int8c"], ("data", (SIZE, SIZE, 3))),
                ("NanoDet-m %dx%d" % nanodet_shape[:2], "fp32", False, nanodet, ("input.1", nanodet_shape)),
                ("NanoDet-m %dx%d" % nanodet_shape[:2], "int8", False, nanodet8["int8"], ("input.1", nanodet_shape)),
                ("NanoDet-m %dx%d" % nanodet_shape[:2], "int8 chain", False, nanodet8["int8c"],
                 ("input.1", nanodet_shape))]
        only = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--only=")]  # e.g. --only=RetinaFace
        texts = {b: size(b, elves[b])[0] for b in elves}
        print("\n### Real models on the boards: weights copied into RAM, or in place in flash (ROMFS)\n")
        print("| board | model | precision | loaded | .bin in flash | weights in RAM | ncnn blobs peak | C heap high-water "
              "| Python heap | instructions / extract | MACs | instructions / MAC | firmware text |")
        print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        # (tests/bench/model_macs.py: from the wheel's blob shapes, of the fp32 model: the wheel's
        # own layers cannot run an int8 chain, and the shapes are the same)
        macs = {name: count_macs(param, weights, given[0], given[1])[0]
                for name, precision, _, (param, weights), given in runs if precision == "fp32"}
        chosen = [r for r in runs if not only or any(o in f"{r[0]} {r[1]}" for o in only)]
        for (name, precision, copy, (param, weights), given), board in [(r, b) for r in chosen for b in elves]:
            model = {"param": "/rom/m.param", "bin": "/rom/m.bin", "binary_param": False, "outputs": [],
                     "inputs": [given], "rom": ("m.param", "m.bin")}
            config = {"opt": {"num_threads": 1}, "copy": copy, "models": [model]}
            files = {"m.param": param.read_bytes(), "m.bin": weights.read_bytes()}
            (r,) = probe(target(board, build=False), config, files, timeout=1800)
            if "failed" in r:
                print(f"{name} {precision} failed on the {board} board:\n{r['failed']}", file=sys.stderr)
                return 1
            print(f"| {board} | {name} | {precision} | {'copied' if copy else 'in place'} | {len(files['m.bin']):,} | "
                  f"{r['weights']['ram']:,} | {r['blob_peak']:,} | {r['c_heap_high_water']:,} | "
                  f"{r['py_heap_extract']:,} | {r['instructions']:,} | {macs[name]:,} | "
                  f"{r['instructions'] / macs[name]:.1f} | {texts[board]:,} |")
        camera_rows([r for r in chosen if r[1] == "int8 chain" and not r[0].startswith("MNIST")], elves, macs)
    print("\nint8: int8 layers with float between them (what ncnn's own int8 models do); int8 chain: int8 "
          "between int8 layers, requantized with integer multipliers (quantize_int8.py --chain). "
          "Weights in RAM: the C heap a load left in use (copies, conversions); ncnn blobs peak: the most "
          "bytes of blobs and workspace at once in one extract (a counting Allocator); C heap high-water: "
          "the most the C library ever took from the board's 3.4 MiB (a fresh boot each row); Python heap: "
          "MicroPython's heap in use after the extract. Inputs filled with 0.5; one thread.")
    return 0


def camera_rows(runs: list, elves: dict[str, Path], macs: dict[str, int]) -> None:
    """The int8 chain models as a board runs them from a camera: an RGB565 frame straight to
    int8 (Mat.from_pixels_int8), every block in an arena, first fit (which makes the plan) and
    then as planned (make preflight FRAME=rgb565's runs: ncnn_mp_tools/preflight.arena_runs)."""
    from ncnn_mp_tools.preflight import arena_runs

    print("\n### From an RGB565 camera frame, int8 from the first layer, in an arena (a fresh boot each)\n")
    print("| board | model | arena first fit | arena planned (input included) | off the plan | C heap high-water "
          "| instructions / extract | frame to int8 | instructions / MAC |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for (name, _, _, (param, weights), given), board in [(r, b) for r in runs for b in elves]:
        model = {"param": "/rom/m.param", "bin": "/rom/m.bin", "binary_param": False, "outputs": [],
                 "inputs": [given], "rom": ("m.param", "m.bin")}
        config = {"opt": {"num_threads": 1}, "copy": False, "models": [model], "frame": "RGB565"}
        files = {"m.param": param.read_bytes(), "m.bin": weights.read_bytes()}
        (counted,) = probe(target(board, build=False), config, files, timeout=1800)
        ((fit, planned),) = arena_runs(target(board, build=False), config, files, [counted])
        if "failed" in planned:
            print(f"{name} from a frame failed on the {board} board:\n{planned['failed']}", file=sys.stderr)
            continue
        print(f"| {board} | {name} | {fit['blob_peak']:,} | {planned['blob_peak']:,} | {planned['unplanned']} | "
              f"{planned['c_heap_high_water']:,} | {planned['instructions']:,} | {planned['frame_instructions']:,} | "
              f"{planned['instructions'] / macs[name]:.1f} |")


if __name__ == "__main__":
    sys.exit(main())

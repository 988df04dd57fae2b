# SPDX-License-Identifier: MIT
"""What ncnn_mp's messages and optional parts cost in flash (make mcu-text): the Cortex-M3
board's firmware (profile qemu) built with each error-text mode and with each of
ncnn_mp/binding/config.h's switches off, its text and the binding's share of it (from the linker
map), printed as a Markdown table (docs/boards.md keeps the last one).

Error-text modes are MicroPython's own (py/mpconfig.h): messages compressed (the qemu port's
default, MICROPY_ROM_TEXT_COMPRESSION=1), not compressed, and terse (MICROPY_ERROR_REPORTING_TERSE:
ncnn_mp's messages say only where). (..._NONE is not measured: MicroPython 1.25's own
py/nativeglue.c does not build in that mode, it takes the address of mp_raise_msg, a macro there;
ncnn_mp's sources compile in it.)

    make mcu-text
"""

from __future__ import annotations

from ci.common import PROFILES, SetupError
from ci.firmware import build_firmware
from mcu_report import size, text_by_part  # (this folder: the script's own)

TERSE = "-DMICROPY_ERROR_REPORTING=MICROPY_ERROR_REPORTING_TERSE"
SWITCHES = ["NCNN_MP_HAS_PIXELS", "NCNN_MP_HAS_CAMERA", "NCNN_MP_HAS_DRAWING", "NCNN_MP_HAS_PYTHON_READERS",
            "NCNN_MP_HAS_COUNTING_ALLOCATOR", "NCNN_MP_HAS_GRAPH_INFO"]
BINDING = "ncnn_mp (the binding)"

# ncnn with its pixel functions and drawing, as a board that takes camera frames builds it (the
# boards' own ncnn has neither: NCNN_MP_HAS_PIXELS and _DRAWING change nothing there).
PIXELS = ["-DNCNN_PIXEL=ON", "-DNCNN_PIXEL_DRAWING=ON"]

# (name, what, make variables and ncnn options added to the qemu profile's, the row it is compared with)
VARIANTS: list[tuple[str, str, list[str], list[str], str]] = [
    ("qemu", "messages compressed (the board's default)", [], [], "qemu"),
    ("qemu-text-plain", "messages not compressed", ["MICROPY_ROM_TEXT_COMPRESSION=0"], [], "qemu"),
    ("qemu-text-terse", "terse errors (ncnn_mp's messages: where only)", [f"CFLAGS_EXTRA={TERSE}"], [], "qemu"),
    *[(f"qemu-no-{s.removeprefix('NCNN_MP_HAS_').lower().replace('_', '-')}", f"{s}=0", [f"NCNN_MP_CFLAGS=-D{s}=0"], [],
       "qemu") for s in SWITCHES if s not in ("NCNN_MP_HAS_PIXELS", "NCNN_MP_HAS_DRAWING")],
    ("qemu-small", "terse errors, every switch off (profile qemu-small)", [], [], "qemu"),
    ("qemu-pixels", "ncnn with NCNN_PIXEL and NCNN_PIXEL_DRAWING (a camera board's)", [], PIXELS, "qemu"),
    ("qemu-pixels-no-drawing", "the same, NCNN_MP_HAS_DRAWING=0", ["NCNN_MP_CFLAGS=-DNCNN_MP_HAS_DRAWING=0"], PIXELS,
     "qemu-pixels"),
    ("qemu-pixels-no-pixels", "the same, NCNN_MP_HAS_PIXELS=0 (no drawing either)", ["NCNN_MP_CFLAGS=-DNCNN_MP_HAS_PIXELS=0"],
     PIXELS, "qemu-pixels"),
]


def main() -> int:
    for name, _, make_vars, ncnn_options, _ in VARIANTS:
        if name not in PROFILES:
            PROFILES[name] = {"base": "qemu", "extra_make_vars": make_vars, "extra_ncnn_options": ncnn_options}
    rows: dict[str, tuple[str, int, int, str]] = {}
    failed = []
    for name, what, _, _, against in VARIANTS:
        try:
            elf = build_firmware(name)
        except SetupError:  # (the build's log says why)
            failed.append(name)
            continue
        rows[name] = (what, size(name, elf)[0], text_by_part(elf).get(BINDING, 0), against)
    print("| firmware | what | firmware text | binding text | text saved | against |")
    print("|---|---|---:|---:|---:|---|")
    for name, (what, text, binding, against) in rows.items():
        saved = f"{rows[against][1] - text:,}" if against in rows and against != name else ""
        print(f"| {name} | {what} | {text:,} | {binding:,} | {saved} | {against if saved else ''} |")
    print("\n(bytes; binding: ncnn_mp/binding/, seam/ and guard/, not kernels/, from the linker map)")
    if failed:
        print(f"\ndid not build: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What ncnn_mp's messages and optional parts cost in flash (make mcu-text): the Cortex-M3
board's firmware (profile qemu) built with each error-text mode and with each of
ncnn_mp/config.h's switches off, its text and the binding's share of it (from the linker
map), printed as a Markdown table (docs/boards.md keeps the last one).

Error-text modes are MicroPython's own (py/mpconfig.h): messages compressed (the qemu port's
default, MICROPY_ROM_TEXT_COMPRESSION=1), not compressed, terse (MICROPY_ERROR_REPORTING_TERSE:
ncnn_mp's messages say only where) and none (..._NONE: the exception's type only).

    make mcu-text
"""

from __future__ import annotations

from ci.common import PROFILES, SetupError
from ci.firmware import build_firmware
from mcu_report import size, text_by_part  # (this folder: the script's own)

TERSE = "-DMICROPY_ERROR_REPORTING=MICROPY_ERROR_REPORTING_TERSE"
NONE = "-DMICROPY_ERROR_REPORTING=MICROPY_ERROR_REPORTING_NONE"
SWITCHES = ["NCNN_MP_HAS_PIXELS", "NCNN_MP_HAS_DRAWING", "NCNN_MP_HAS_PYTHON_READERS",
            "NCNN_MP_HAS_COUNTING_ALLOCATOR", "NCNN_MP_HAS_GRAPH_INFO"]
BINDING = "ncnn_mp (the binding)"

# (name, what, make variables added to the qemu profile's)
VARIANTS: list[tuple[str, str, list[str]]] = [
    ("qemu", "messages compressed (the board's default)", []),
    ("qemu-text-plain", "messages not compressed", ["MICROPY_ROM_TEXT_COMPRESSION=0"]),
    ("qemu-text-terse", "terse errors (ncnn_mp's messages: where only)", [f"CFLAGS_EXTRA={TERSE}"]),
    ("qemu-text-none", "no error messages (types only; not compressed)",
     ["MICROPY_ROM_TEXT_COMPRESSION=0", f"CFLAGS_EXTRA={NONE}"]),
    *[(f"qemu-no-{s.removeprefix('NCNN_MP_HAS_').lower().replace('_', '-')}", f"{s}=0", [f"NCNN_MP_CFLAGS=-D{s}=0"])
      for s in SWITCHES],
    ("qemu-small", "terse errors, every switch off (profile qemu-small)", []),
]


def main() -> int:
    for name, _, make_vars in VARIANTS:
        if name not in PROFILES:
            PROFILES[name] = {"base": "qemu", "extra_make_vars": make_vars}
    rows = []
    failed = []
    for name, what, _ in VARIANTS:
        try:
            elf = build_firmware(name)
        except SetupError:  # (the build's log says why)
            failed.append(name)
            continue
        rows.append((name, what, size(name, elf)[0], text_by_part(elf).get(BINDING, 0)))
    base_text, base_binding = rows[0][2], rows[0][3]
    print("| firmware | what | firmware text | binding text | firmware text saved |")
    print("|---|---|---:|---:|---:|")
    for name, what, text, binding in rows:
        print(f"| {name} | {what} | {text:,} | {binding:,} | {base_text - text:,} |")
    print(f"\n(bytes; binding: ncnn_mp/*.c and the C++ seam, not the kernels; saved: against {rows[0][0]},"
          f" whose binding is {base_binding:,})")
    if failed:
        print(f"\ndid not build: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

# SPDX-License-Identifier: MIT
"""Per-layer time and memory of a net, from Python: ncnn computes blobs lazily and an Extractor
keeps what it computed, so extracting every layer's outputs in order through one Extractor
costs each extract only that layer's work.

    from ncnn_mp_lib import netprofile
    rows = netprofile.profile(net, {"data": image})   # one row per layer, in net order
    netprofile.show(rows)                             # sorted by time, with a total

A row is (layer name, type, time, output shapes, output bytes). Time is microseconds from
`time.ticks_us()`, or what `clock()` counts when given (on the QEMU boards,
`qemu_board.time_ns`: emulated instructions under -icount). Works on Unix and on a board;
needs a firmware with NCNN_STRING (layer names).
"""

try:
    import time
except ImportError:  # (a bare-metal board may have none: give profile() its clock)
    time = None  # type: ignore[assignment]

try:
    from typing import Any, Callable, Mapping

    Row = tuple[str, str, int, list[tuple[int, ...]], int]
except ImportError:  # MicroPython: the annotations are strings it never reads
    pass


def _ticks() -> int:
    if time is None:
        raise ValueError("netprofile.profile: this firmware has no time module: give a clock")
    return time.ticks_us() if hasattr(time, "ticks_us") else time.perf_counter_ns() // 1000


def _shape(m: "Any") -> "tuple[int, ...]":
    return {1: (m.w,), 2: (m.w, m.h), 3: (m.w, m.h, m.c), 4: (m.w, m.h, m.d, m.c)}.get(m.dims, ())


def profile(net: "Any", inputs: "Mapping[str, Any]", clock: "Callable[[], int] | None" = None) -> "list[Row]":
    """One Extractor: the inputs given, then every layer's tops extracted in net order."""
    clock = clock or _ticks
    blobs = net.blobs()
    rows: "list[Row]" = []
    with net.create_extractor() as ex:
        for name, mat in inputs.items():
            ex.input(name, mat)
        for layer in net.layers():
            if layer["type"] == "Input":
                continue
            t0 = clock()
            outs = [ex.extract(blobs[top]["name"]) for top in layer["tops"]]
            spent = clock() - t0
            shapes = [_shape(m) for m in outs]
            size = sum(m.w * m.h * m.d * m.c * m.elemsize for m in outs)
            rows.append((layer["name"], layer["type"], spent, shapes, size))
    return rows


def show(rows: "list[Row]", unit: str = "us") -> None:
    """The rows sorted by time, slowest first, each with its share of the total."""
    total = sum(r[2] for r in rows) or 1
    print("%-28s %-22s %12s %6s  %-18s %10s" % ("layer", "type", unit, "%", "output", "bytes"))
    for name, kind, spent, shapes, size in sorted(rows, key=lambda r: -r[2]):
        shape = " ".join("x".join(str(v) for v in s) for s in shapes)
        print("%-28s %-22s %12d %6.1f  %-18s %10d" % (name[:28], kind[:22], spent, 100.0 * spent / total, shape, size))
    print("%-28s %-22s %12d %6.1f" % ("total", "", total, 100.0))

# SPDX-License-Identifier: MIT
"""What ncnn_mp adds to ncnn's C API, in instructions (make bench-binding).

Two costs, each the same work done by MicroPython through ncnn_mp and by a C program
through ncnn's C API (tests/bench/native_bench.c --untimed) on the very libncnn.a the
firmware links, counted by valgrind --tool=callgrind (stable on a noisy machine):

- one extract: make an Extractor, input a 4-float Mat, extract the output of one ReLU,
  let the Extractor go (Python: `with net.create_extractor() as ex`; C: destroy it and
  the result). Counted for N and 2N extracts: the difference over N cancels start-up
  and loading.
- one custom-layer call: a chain of CHAIN in-place no-op layers (a Python Layer
  subclass whose forward_inplace does nothing; in C a layer made with ncnn_layer_create
  whose forward_inplace_1 returns 0) minus the chain-free net, per layer.

The binding's cost is the MicroPython figure minus the native one. Where the instructions
go comes from the same runs on a firmware with symbols (self cost per function, N vs
2N), grouped into ncnn (ncnn::*, its C API), the C library (malloc, free, mem*),
ncnn_mp's own functions and MicroPython's (interpreter, objects, GC); the functions of
ncnn_mp and MicroPython that cost most are listed.

    python tests/bench/binding_cost.py FIRMWARE SYMBOLS_FIRMWARE NATIVE_BENCH
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

CHAIN = 100
EXTRACTS = 200  # N for the extract loop (2N against N)
CHAIN_EXTRACTS = 20  # N for the chains

MP_LOOP = """
import sys, ncnn_mp
param, out, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])

class Nop(ncnn_mp.Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
    def forward_inplace(self, blob, opt):
        pass

net = ncnn_mp.Net()
net.opt.num_threads = 1
net.register_custom_layer("Nop", Nop)
net.load_param(param)
net.load_model(ncnn_mp.DataReader(zeros=True))
x = ncnn_mp.Mat(4)
x.fill(0.5)

def run(net, x, out, runs):
    for _ in range(runs):
        with net.create_extractor() as ex:
            ex.input("data", x)
            ex.extract(out)

run(net, x, out, runs)
"""


def param(lines: list[str]) -> str:
    return "7767517\n%d %d\n%s\n" % (len(lines), len(lines), "\n".join(lines))


RELU = param(["Input data 0 1 data 0=4", "ReLU relu 1 1 data out"])


def chain(n: int) -> str:
    lines = ["Input data 0 1 data 0=4"]
    lines += ["Nop n%d 1 1 %s b%d" % (i, "data" if i == 0 else "b%d" % (i - 1), i) for i in range(n)]
    return param(lines)


def callgrind(cmd: list[str], out: Path) -> int:
    """Instructions of one process; the profile goes to `out`."""
    p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    return int(re.search(r"Collected : (\d+)", p.stderr).group(1))  # type: ignore[union-attr]


def self_costs(profile: Path) -> dict[str, int]:
    """Instructions per function (self cost), from callgrind_annotate."""
    p = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", "--auto=no", str(profile)],
                       capture_output=True, text=True, check=True)
    costs: dict[str, int] = defaultdict(int)
    for line in p.stdout.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*?):(.+?)(?: \[.*\])?$", line)
        if m and "PROGRAM TOTALS" not in line:
            costs[f"{m.group(2)}:{m.group(3)}"] += int(m.group(1).replace(",", ""))
    return costs


def part(key: str) -> str:
    path, fn = key.split(":", 1)
    if fn.startswith("ncnn_mp_"):
        return "ncnn_mp"
    if "/src/micropython-" in path or "/py/" in path or "/ports/" in path:
        return "MicroPython"
    if path == "???" and fn.startswith(("ncnn::", "ncnn_", "std::", "void std::")):
        return "ncnn"  # (libstdc++'s templates, instantiated in ncnn's code)
    return "C library"


class Measure:
    """One MicroPython-vs-native comparison: per-unit instructions and their split."""

    def __init__(self, d: Path, firmware: str, symbols: str, native: str) -> None:
        self.d, self.firmware, self.symbols, self.native = d, firmware, symbols, native
        self.script = d / "loop.py"
        self.script.write_text(MP_LOOP)
        self.k = 0

    def runs(self, text: str, out: str, n: int) -> dict[str, tuple[int, dict[str, int]]]:
        """Per kind (mp, mp-symbols, native): instructions of 2n extracts minus n, and the
        self cost per function of the same difference."""
        self.k += 1
        path = self.d / f"net{self.k}.param"
        path.write_text(text)
        cmds = {
            "mp": [self.firmware, str(self.script), str(path), out],
            "mp-symbols": [self.symbols, str(self.script), str(path), out],
            "native": [self.native, "--untimed", str(path), "data", out, "4"],
        }
        result = {}
        for kind, cmd in cmds.items():
            total, funcs = [], []
            for runs in (n, 2 * n):
                prof = self.d / f"cg.{kind}.{runs}"
                total.append(callgrind([*cmd, str(runs)], prof))
                funcs.append(self_costs(prof) if kind != "mp" else {})
            diff = {f: funcs[1].get(f, 0) - funcs[0].get(f, 0) for f in set(funcs[0]) | set(funcs[1])}
            result[kind] = (total[1] - total[0], diff)
        return result


def split(diff: dict[str, int], units: float) -> dict[str, float]:
    parts: dict[str, float] = defaultdict(float)
    for f, v in diff.items():
        parts[part(f)] += v / units
    return parts


def table(title: str, mp: tuple[int, dict[str, int]], sym: tuple[int, dict[str, int]],
          native: tuple[int, dict[str, int]], units: float, minus: dict | None = None) -> float:
    def per(x: tuple[int, dict[str, int]], base: tuple[int, dict[str, int]] | None) -> float:
        return (x[0] - (base[0] if base else 0)) / units

    base = minus or {}
    m, s, n = per(mp, base.get("mp")), per(sym, base.get("mp-symbols")), per(native, base.get("native"))

    def parts(x: tuple[int, dict[str, int]], kind: str) -> dict[str, float]:
        p = split(x[1], units)
        if kind in base:
            for k, v in split(base[kind][1], units).items():
                p[k] -= v
        return p

    ps, pn = parts(sym, "mp-symbols"), parts(native, "native")
    print(f"| {title} | ncnn_mp (MicroPython) | native (ncnn's C API) | ncnn_mp - native |")
    print("|---|---|---|---|")
    print(f"| instructions (callgrind) | {m:,.0f} | {n:,.0f} | **{m - n:,.0f}** |")
    for k in ("ncnn", "C library", "ncnn_mp", "MicroPython"):
        print(f"| of which {k} | {ps.get(k, 0):,.0f} | {pn.get(k, 0):,.0f} | {ps.get(k, 0) - pn.get(k, 0):,.0f} |")
    print(f"| (the firmware with symbols: total) | {s:,.0f} | | |")
    print()
    return m - n


def top(title: str, diff: dict[str, int], units: float, minus: dict[str, int] | None = None, count: int = 25) -> None:
    d = dict(diff)
    for f, v in (minus or {}).items():
        d[f] = d.get(f, 0) - v
    rows = sorted(((v / units, f) for f, v in d.items() if part(f) in ("ncnn_mp", "MicroPython", "C library")),
                  reverse=True)[:count]
    print(f"| {title}: function (ncnn_mp, MicroPython, C library) | self instructions |")
    print("|---|---|")
    for v, f in rows:
        if v >= 1:
            print(f"| `{f.split(':', 1)[1]}` | {v:,.0f} |")
    print()


def main(firmware: str, symbols: str, native: str) -> None:
    print(f"machine: {os.uname().machine}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}")
    print()
    with tempfile.TemporaryDirectory() as tmp:
        m = Measure(Path(tmp), firmware, symbols, native)
        ex = m.runs(RELU, "out", EXTRACTS)
        extract = table("one extract (Extractor, input, extract, close)", ex["mp"], ex["mp-symbols"],
                        ex["native"], EXTRACTS)
        empty = m.runs(chain(0), "data", CHAIN_EXTRACTS)
        full = m.runs(chain(CHAIN), "b%d" % (CHAIN - 1), CHAIN_EXTRACTS)
        layer = table("one no-op custom-layer call", full["mp"], full["mp-symbols"], full["native"],
                      CHAIN_EXTRACTS * CHAIN, minus=empty)
        top("one extract", ex["mp-symbols"][1], EXTRACTS)
        top("one custom-layer call", full["mp-symbols"][1], CHAIN_EXTRACTS * CHAIN, empty["mp-symbols"][1])
    print(f"binding cost: {extract:,.0f} instructions per extract, {layer:,.0f} per custom-layer call")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])

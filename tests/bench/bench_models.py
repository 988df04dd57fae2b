# SPDX-License-Identifier: MIT
"""Whole-model latency: ncnn_mp against the CPython `ncnn` wheel and native ncnn (make bench-models).

For ncnn's benchmark networks (weightless, as benchncnn runs them; ../shared/models/bench),
the three real models with their weights (../shared/models/real), MNIST and the project's
digits model, the same extract loop (make an Extractor, input, extract every output) runs in:
  (a) ncnn_mp on the Unix firmware, (b) the CPython wheel, (c) tests/bench/native_bench.c
  linked against the very libncnn.a the firmware uses,
at each thread count given (default 1 and 2). Interleaved: ROUNDS rounds, each running the
three processes one after the other (in a rotating order), so that what the shared machine
does meanwhile hits all three alike; each process times RUNS extracts after 3 warm-ups, and
the figures are the min and median over all rounds. Prints Markdown tables: milliseconds,
the ratio a/b (ncnn_mp over the wheel, the number to keep at or below 1) and a/c, peak RSS,
the MicroPython heap each ncnn_mp extract allocates; instructions per extract under valgrind
--tool=callgrind at 1 thread for every model (the figure noise cannot move); the time from
process start to the first MNIST result; firmware sizes. Saves a PNG chart per thread count.

    python tests/bench/bench_models.py FIRMWARE PLAIN_FIRMWARE NATIVE_BENCH [THREADS ...]

(NATIVE_BENCH: tests/bench/native_bench.c built by ci/tool.py against the firmware's libncnn.a.)
"""

from __future__ import annotations

import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "models"
ROUNDS = 5

# Each loop prints every timed extract's milliseconds (then, ncnn_mp, the heap per extract).
MP_LOOP = """
import gc, sys, time, ncnn_mp
param, model, in_name, out_names, w, h, c, threads, runs = sys.argv[1:]
w, h, c, threads, runs = int(w), int(h), int(c), int(threads), int(runs)
if out_names[0] == "@":  # (MicroPython's Unix port takes no argument of 256 bytes or more)
    with open(out_names[1:]) as f:
        out_names = f.read()
outs = out_names.split(",")
net = ncnn_mp.Net()
net.opt.num_threads = threads
if model.endswith("digits.bin"):
    from digits_layers import Standardize  # the script runs from examples/
    net.register_custom_layer("Standardize", Standardize)
net.load_param(param)
net.load_model(ncnn_mp.DataReader(zeros=True) if model == "-" else model)
x = ncnn_mp.Mat(w, h, c)
x.fill(0.5)
def once():
    # Closed at once, as the native loop destroys its extractor: an Extractor left to the
    # garbage collector holds its blobs until a collection (about twice the RSS here).
    with net.create_extractor() as ex:
        ex.input(in_name, x)
        for name in outs:
            ex.extract(name)
if runs < 0:  # (callgrind: -runs extracts, nothing else)
    for i in range(-runs):
        once()
    raise SystemExit
times = []
for i in range(runs + 3):
    t0 = time.ticks_us()
    once()
    if i >= 3:
        times.append(time.ticks_diff(time.ticks_us(), t0) / 1000)
gc.collect()
gc.disable()
before = gc.mem_alloc()
for _ in range(10):
    once()
per_extract = (gc.mem_alloc() - before) // 10
gc.enable()
print(" ".join("%.4f" % t for t in times), per_extract)
"""

PY_LOOP = """
import sys, time, ncnn
param, model, in_name, out_names, w, h, c, threads, runs = sys.argv[1:]
w, h, c, threads, runs = int(w), int(h), int(c), int(threads), int(runs)
if out_names[0] == "@":
    with open(out_names[1:]) as f:
        out_names = f.read()
outs = out_names.split(",")
net = ncnn.Net()
net.opt.num_threads = threads
made = []
if model.endswith("digits.bin"):
    from digits_layers import Standardize  # the script runs from examples/
    def create():
        layer = Standardize()
        made.append(layer)
        return layer
    net.register_custom_layer("Standardize", create, lambda layer: None)
net.load_param(param)
empty = ncnn.DataReaderFromEmpty()
net.load_model(empty if model == "-" else model)
x = ncnn.Mat(w, h, c)
x.fill(0.5)
if runs < 0:  # (callgrind: -runs extracts, nothing else)
    for i in range(-runs):
        ex = net.create_extractor()
        ex.input(in_name, x)
        for name in outs:
            ex.extract(name)
        del ex
    raise SystemExit
times = []
for i in range(runs + 3):
    t0 = time.perf_counter()
    ex = net.create_extractor()
    ex.input(in_name, x)
    for name in outs:
        ex.extract(name)
    del ex
    if i >= 3:
        times.append((time.perf_counter() - t0) * 1000)
print(" ".join("%.4f" % t for t in times))
"""


def models() -> list[tuple[str, str, str, str, str, tuple[int, int, int]]]:
    """name, param, model ('-' for zeros), input, outputs (comma-separated), (w, h, c)"""
    out = []
    digits = REPO / "build" / "models" / "digits"
    out.append(("digits (Python layer)", str(digits / "digits.param"), str(digits / "digits.bin"), "data", "prob",
                (8, 8, 1)))
    if (SHARED / "mnist" / "mnist.param").exists():
        out.append(("mnist", str(SHARED / "mnist" / "mnist.param"), str(SHARED / "mnist" / "mnist.bin"), "data", "fc",
                    (28, 28, 1)))
    bench = {"squeezenet": 227, "mobilenet": 224, "mobilenet_v2": 224, "resnet18": 224, "shufflenet_v2": 224,
             "yolo-fastest-1.1": 320}
    for name, size in bench.items():
        p = SHARED / "bench" / f"{name}.param"
        if p.exists():
            out.append((name, str(p), "-", "data", "output", (size, size, 3)))
    if (SHARED / "bench" / "FastestDet.param").exists():
        out.append(("FastestDet", str(SHARED / "bench" / "FastestDet.param"), "-", "in0", "out0", (352, 352, 3)))
    real = SHARED / "real"
    retina = ",".join(f"face_rpn_{kind}_stride{s}" for s in (32, 16, 8)
                      for kind in ("cls_prob_reshape", "bbox_pred", "landmark_pred"))
    for name, stem, inp, outs, size in (("SqueezeNet v1.1 (weights)", "squeezenet_v1.1", "data", "prob", 227),
                                        ("NanoDet-m (weights)", "nanodet_m", "input.1", "792,795,814,817,836,839", 320),
                                        ("RetinaFace mnet.25 (weights)", "mnet.25-opt", "data", retina, 320)):
        if (real / f"{stem}.param").exists():
            out.append((name, str(real / f"{stem}.param"), str(real / f"{stem}.bin"), inp, outs, (size, size, 3)))
    return out


def run_measured(cmd: list[str]) -> tuple[str, float, int]:
    """stdout, wall seconds, and peak RSS (KiB) of one process."""
    # GNU time forks the program itself: Linux carries the peak RSS over fork and exec,
    # so measured from here it would start at this (large) Python process's.
    with tempfile.NamedTemporaryFile("r") as rss:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-o", rss.name, "-f", "%M", *cmd], capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError(f"{cmd} exited {p.returncode}: {p.stderr[-500:]}")
        return p.stdout, wall, int(rss.read().split()[-1])


def with_script(script: str) -> str:
    # Written into examples/ so that both interpreters find digits_layers next to it.
    with tempfile.NamedTemporaryFile("w", suffix=".py", dir=REPO / "examples", delete=False) as f:
        f.write(script)
    return f.name


@contextlib.contextmanager
def script_args(args: list[str]) -> Iterator[list[str]]:
    """A script's arguments: the outputs' names (args[3]) in a file when long, as "@path"
    (MicroPython's Unix port stops at an argument of 256 bytes or more)."""
    names = with_script(args[3]) if len(args[3]) > 200 else None
    try:
        yield [*args[:3], "@" + names, *args[4:]] if names else args
    finally:
        if names:
            os.unlink(names)


def run_script(cmd: list[str], script: str, args: list[str]) -> tuple[list[float], int]:
    """The numbers the script printed, and its peak RSS in KiB."""
    path = with_script(script)
    try:
        with script_args(args) as a:
            out, _, rss = run_measured([*cmd, path, *a])
        return [float(v) for v in out.split()], rss
    finally:
        os.unlink(path)


class Side:
    """One of the three runs of a model: every extract's milliseconds over the rounds."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.times: list[float] = []
        self.rss = 0
        self.heap = 0

    def add(self, numbers: list[float], rss: int, heap_last: bool = False) -> None:
        if heap_last:
            self.heap = int(numbers.pop())
        self.times += numbers
        self.rss = max(self.rss, rss)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    def cell(self) -> str:
        return f"{min(self.times):.3f} / {self.median:.3f}" if self.times else "-"


def interleaved(exe: str, firmware: str, args: list[str], native_too: bool) -> tuple[Side, Side, Side]:
    """ROUNDS rounds of the three processes, their order rotating round by round."""
    a, b, c = Side("ncnn_mp"), Side("wheel"), Side("native")
    runs: list[tuple[Side, list[str], str | None]] = [(a, [firmware], MP_LOOP), (b, [sys.executable], PY_LOOP)]
    if native_too:
        runs.append((c, [exe], None))
    for r in range(ROUNDS):
        for side, cmd, script in runs[r % len(runs):] + runs[:r % len(runs)]:
            if script:
                numbers, rss = run_script(cmd, script, args)
            else:
                out, _, rss = run_measured([*cmd, *args])
                numbers = [float(v) for v in out.split()]
            side.add(numbers, rss, heap_last=side is a)
    return a, b, c


def chart(rows: list[tuple[str, float, float, float]], threads: int) -> Path:
    """Median milliseconds per model for the three, relative to native ncnn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r[0] for r in rows]
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.27
    for k, (label, colour) in enumerate((("native ncnn", "#555555"), ("ncnn_mp", "#d95f02"),
                                         ("CPython wheel", "#1b9e77"))):
        ax.bar([i + (k - 1) * width for i in range(len(rows))], [r[1 + k] / r[1] for r in rows], width,
               label=label, color=colour)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(rows)), names, rotation=20, ha="right")
    ax.set_ylabel("median extract time / native")
    ax.set_title(f"ncnn_mp vs native ncnn vs the CPython wheel, {threads} thread(s), {time.strftime('%Y-%m-%d')}")
    ax.legend()
    fig.tight_layout()
    out = REPO / "build" / "bench" / f"models-{threads}t.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    return out


def callgrind(cmd: list[str]) -> int:
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={d}/cg", *cmd],
                           capture_output=True, text=True, check=True)
        return int(re.search(r"Collected : (\d+)", p.stderr).group(1))  # type: ignore[union-attr]


def per_extract_instructions(cmd: list[str], script: str | None, args: list[str], few: int = 10,
                             many: int = 40) -> float:
    """(instructions with `many` extracts - with `few`) / (many - few): start-up and loading cancel
    out (the loops' untimed mode: a negative count, no warm-up, no timing)."""
    path = with_script(script) if script else None
    try:
        def count(runs: int) -> int:
            if not path:
                return callgrind([*cmd, "--untimed-extracts", *args[:-1], str(runs)])
            with script_args(args[:-1] + [str(-runs)]) as a:
                return callgrind([*cmd, path, *a])
        return (count(many) - count(few)) / (many - few)
    finally:
        if path:
            os.unlink(path)


def main(firmware: str, plain: str, exe: str, thread_counts: list[int]) -> None:
    print(f"{time.strftime('%Y-%m-%d')}, {os.uname().machine}, {os.cpu_count()} cores; milliseconds per extract, "
          f"min / median over {ROUNDS} interleaved rounds")
    for threads in thread_counts:
        print()
        print(f"{threads} thread(s):")
        print()
        print("| model | threads | ncnn_mp (a) | CPython wheel (b) | native ncnn (c) | **a/b median** | a/c median "
              "| peak RSS MiB a / b / c | ncnn_mp heap per extract |")
        print("|---|---|---|---|---|---|---|---|---|")
        rows = []
        for name, param, model, inp, outp, (w, h, c) in models():
            quick = w * h * c < 10000
            args = [param, model, inp, outp, str(w), str(h), str(c), str(threads), "40" if quick else "4"]
            python_layer = model.endswith("digits.bin")  # native C has no Python layer to run
            a, b, n = interleaved(exe, firmware, args, not python_layer)
            ratio_c = f"{a.median / n.median:.3f}" if n.times else "-"
            rss = f"{a.rss / 1024:.1f} / {b.rss / 1024:.1f} / " + (f"{n.rss / 1024:.1f}" if n.times else "-")
            print(f"| {name} | {threads} | {a.cell()} | {b.cell()} | {n.cell()} | **{a.median / b.median:.3f}** "
                  f"| {ratio_c} | {rss} | {a.heap} B |", flush=True)
            if n.times:
                rows.append((name, n.median, a.median, b.median))
        print()
        print(f"chart: {chart(rows, threads)}")
    print()
    print("| instructions per extract, 1 thread (callgrind) | native ncnn (c) | ncnn_mp (a) | CPython wheel (b) "
          "| a/b |")
    print("|---|---|---|---|---|")
    for name, param, model, inp, outp, (w, h, c) in models():
        if model.endswith("digits.bin"):
            continue
        args = [param, model, inp, outp, str(w), str(h), str(c), "1", "1"]
        few, many = (10, 40) if w * h * c < 10000 else (2, 3)  # (the first extract makes ncnn's pools)
        ins = [per_extract_instructions([exe], None, args, few, many),
               per_extract_instructions([firmware], MP_LOOP, args, few, many),
               per_extract_instructions([sys.executable], PY_LOOP, args, few, many)]
        print(f"| {name} | {ins[0]:,.0f} | {ins[1]:,.0f} ({ins[1] / ins[0]:.4f}x) | {ins[2]:,.0f} "
              f"({ins[2] / ins[0]:.4f}x) | **{ins[1] / ins[2]:.4f}** |", flush=True)
    mnist = [m for m in models() if m[0] == "mnist"]
    if mnist:
        _, param, model, inp, outp, (w, h, c) = mnist[0]
        args = [param, model, inp, outp, str(w), str(h), str(c), "1", "1"]
        print()
        print("| MNIST, one process each | native ncnn (c) | ncnn_mp (a) | CPython wheel (b) |")
        print("|---|---|---|---|")
        starts = []
        for cmd, script in (([exe], None), ([firmware], MP_LOOP), ([sys.executable], PY_LOOP)):
            path = with_script(script) if script else None
            try:
                runs = [run_measured([*cmd, *([path] if path else []), *args])[1:] for _ in range(3)]
                best = (min(t for t, _ in runs), max(r for _, r in runs))
            finally:
                if path:
                    os.unlink(path)
            starts.append(best)
        print("| start to first result, ms (best of 3; load + 1 extract) | "
              + " | ".join(f"{t * 1000:.0f}" for t, _ in starts) + " |")
        print("| peak RSS, KiB | " + " | ".join(f"{r:,}" for _, r in starts) + " |")
        print(f"| ncnn_mp RSS / wheel RSS | | {starts[1][1] / starts[2][1]:.2f} | |")
    print()
    print("| Unix firmware | text | data | bss |")
    print("|---|---|---|---|")
    for label, path in (("without ncnn_mp", plain), ("with ncnn_mp (full desktop ncnn)", firmware)):
        text, data, bss = subprocess.run(["size", path], capture_output=True, text=True,
                                         check=True).stdout.splitlines()[1].split()[:3]
        print(f"| {label} | {int(text):,} | {int(data):,} | {int(bss):,} |")
    objs = sorted((Path(firmware).parent / "ncnn_mp" / "ncnn_mp").rglob("*.o"))
    if objs:
        lines = subprocess.run(["size", *map(str, objs)], capture_output=True, text=True, check=True).stdout
        total = [sum(int(line.split()[i]) for line in lines.splitlines()[1:]) for i in range(3)]
        print(f"| of which ncnn_mp's own code | {total[0]:,} | {total[1]:,} | {total[2]:,} |")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3], [int(t) for t in sys.argv[4:]] or [1, 2])

"""Whole-model latency: ncnn_mp against the CPython `ncnn` wheel and native ncnn (make bench-models).

For ncnn's benchmark networks (weightless, as benchncnn runs them; from
../shared/models/bench when present), MNIST and the project's digits model, the same
extract loop (make an Extractor, input, extract) runs in:
  (a) ncnn_mp on the Unix firmware, (b) the CPython wheel, (c) tests/bench/native_bench.c
  linked against the very libncnn.a the firmware uses.
Prints Markdown tables: min / median milliseconds and the ratios a/c and b/c, peak RSS
of each process, the MicroPython heap each ncnn_mp extract allocates; instructions per
extract under valgrind --tool=callgrind for MNIST and SqueezeNet (1 thread only: the
stable figure on a noisy machine); the time from process start to the first MNIST
result; firmware sizes. Saves a PNG chart and prints its path.

    python tests/bench/bench_models.py FIRMWARE PLAIN_FIRMWARE NCNN_PREFIX [THREADS]
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "models"

MP_LOOP = """
import gc, sys, time, ncnn_mp
param, model, in_name, out_name, w, h, c, threads, runs = sys.argv[1:]
w, h, c, threads, runs = int(w), int(h), int(c), int(threads), int(runs)
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
        ex.extract(out_name)
times = []
for i in range(runs + 3):
    t0 = time.ticks_us()
    once()
    if i >= 3:
        times.append(time.ticks_diff(time.ticks_us(), t0) / 1000)
times.sort()
gc.collect()
gc.disable()
before = gc.mem_alloc()
for _ in range(10):
    once()
per_extract = (gc.mem_alloc() - before) // 10
gc.enable()
print(times[0], times[len(times) // 2], per_extract)
"""

PY_LOOP = """
import sys, time, ncnn
param, model, in_name, out_name, w, h, c, threads, runs = sys.argv[1:]
w, h, c, threads, runs = int(w), int(h), int(c), int(threads), int(runs)
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
times = []
for i in range(runs + 3):
    t0 = time.perf_counter()
    ex = net.create_extractor()
    ex.input(in_name, x)
    ex.extract(out_name)
    if i >= 3:
        times.append((time.perf_counter() - t0) * 1000)
times.sort()
print(times[0], times[len(times) // 2])
"""


def models() -> list[tuple[str, str, str, str, str, tuple[int, int, int]]]:
    """name, param, model ('-' for zeros), input, output, (w, h, c)"""
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


def run_script(cmd: list[str], script: str, args: list[str]) -> tuple[list[float], int]:
    """The numbers the script printed, and its peak RSS in KiB."""
    path = with_script(script)
    try:
        out, _, rss = run_measured([*cmd, path, *args])
        return [float(v) for v in out.split()], rss
    finally:
        os.unlink(path)


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
    """(instructions with `many` timed runs - with `few`) / (many - few): start-up and loading cancel out."""
    path = with_script(script) if script else None
    try:
        def count(runs: int) -> int:
            a = args[:-1] + [str(runs)]
            return callgrind([*cmd, path, *a] if path else [*cmd, *a])
        return (count(many) - count(few)) / (many - few)
    finally:
        if path:
            os.unlink(path)


def native(prefix: str) -> str:
    exe = REPO / "build" / "native_bench"
    src = Path(__file__).with_name("native_bench.c")
    lib = Path(prefix) / "lib" / "libncnn.a"
    if not exe.exists() or exe.stat().st_mtime < max(src.stat().st_mtime, lib.stat().st_mtime):
        subprocess.run(["cc", "-O2", "-o", str(exe), str(src), f"-I{prefix}/include", str(lib),
                        "-lstdc++", "-lm", "-lpthread"], check=True)
    return str(exe)


def main(firmware: str, plain: str, prefix: str, threads: int) -> None:
    exe = native(prefix)
    print(f"{time.strftime('%Y-%m-%d')}, {os.uname().machine}, {os.cpu_count()} cores, {threads} thread(s); "
          "milliseconds per extract, min / median")
    print()
    print("| model | native ncnn (c) | ncnn_mp (a) | CPython wheel (b) | a/c median | b/c median "
          "| peak RSS MiB c / a / b | ncnn_mp heap per extract |")
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for name, param, model, inp, outp, (w, h, c) in models():
        quick = w * h * c < 10000
        runs = "200" if quick else "15"
        args = [param, model, inp, outp, str(w), str(h), str(c), str(threads), runs]
        python_layer = model.endswith("digits.bin")  # native C has no Python layer to run
        nat, _, n_rss = run_measured([exe, *args]) if not python_layer else ("", 0.0, 0)
        (mp_min, mp_med, heap), a_rss = run_script([firmware], MP_LOOP, args)
        (py_min, py_med), b_rss = run_script([sys.executable], PY_LOOP, args)
        mib = f"{n_rss / 1024:.1f} / {a_rss / 1024:.1f} / {b_rss / 1024:.1f}" if nat else \
            f"- / {a_rss / 1024:.1f} / {b_rss / 1024:.1f}"
        if nat:
            n_min, n_med = (float(v) for v in nat.split())
            ratios = f"{mp_med / n_med:.3f} | {py_med / n_med:.3f}"
            native_cell = f"{n_min:.3f} / {n_med:.3f}"
            rows.append((name, n_med, mp_med, py_med))
        else:
            ratios, native_cell = "- | -", "-"
        print(f"| {name} | {native_cell} | {mp_min:.3f} / {mp_med:.3f} | {py_min:.3f} / {py_med:.3f} | {ratios} "
              f"| {mib} | {int(heap)} B |")
    print()
    print(f"chart: {chart(rows, threads)}")
    print()
    print("| instructions per extract (callgrind) | native ncnn (c) | ncnn_mp (a) | CPython wheel (b) |")
    print("|---|---|---|---|")
    for name, param, model, inp, outp, (w, h, c) in models():
        if name not in ("mnist", "squeezenet") or threads != 1:
            continue
        args = [param, model, inp, outp, str(w), str(h), str(c), str(threads), "1"]
        few, many = (10, 40) if name == "mnist" else (1, 3)
        ins = [per_extract_instructions([exe], None, args, few, many),
               per_extract_instructions([firmware], MP_LOOP, args, few, many),
               per_extract_instructions([sys.executable], PY_LOOP, args, few, many)]
        print(f"| {name} | {ins[0]:,.0f} | {ins[1]:,.0f} ({ins[1] / ins[0]:.4f}x) | {ins[2]:,.0f} ({ins[2] / ins[0]:.4f}x) |")
    mnist = [m for m in models() if m[0] == "mnist"]
    if mnist:
        _, param, model, inp, outp, (w, h, c) = mnist[0]
        args = [param, model, inp, outp, str(w), str(h), str(c), str(threads), "1"]
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
        print("| peak RSS, KiB | " + " | ".join(f"{r:,}" for _, r in starts) + f" |")
        print(f"| ncnn_mp RSS / wheel RSS | | {starts[1][1] / starts[2][1]:.2f} | |")
    print()
    print("| Unix firmware | text | data | bss |")
    print("|---|---|---|---|")
    for label, path in (("without ncnn_mp", plain), ("with ncnn_mp (full desktop ncnn)", firmware)):
        text, data, bss = subprocess.run(["size", path], capture_output=True, text=True,
                                         check=True).stdout.splitlines()[1].split()[:3]
        print(f"| {label} | {int(text):,} | {int(data):,} | {int(bss):,} |")
    objs = sorted((Path(firmware).parent / "ncnn_mp" / "ncnn_mp").glob("*.o"))
    if objs:
        lines = subprocess.run(["size", *map(str, objs)], capture_output=True, text=True, check=True).stdout
        total = [sum(int(line.split()[i]) for line in lines.splitlines()[1:]) for i in range(3)]
        print(f"| of which ncnn_mp's own code | {total[0]:,} | {total[1]:,} | {total[2]:,} |")


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) == 5 else 1)

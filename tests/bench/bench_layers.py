# SPDX-License-Identifier: MIT
"""What a custom layer written in Python costs (make bench-layers).

Prints, in one run:
- one no-op custom-layer call: a chain of 100 no-op Python layers minus the chain-free
  net, per layer, for ncnn_mp and for the CPython `ncnn` wheel, in instructions (under
  valgrind --tool=callgrind: stable on a noisy machine) and in microseconds;
- ReLU over a 64x64x16 float blob: ncnn's built-in, a pure-Python custom layer, and a
  @micropython.viper custom layer (microseconds per extract, ncnn_mp).

    python tests/bench/bench_layers.py FIRMWARE
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHAIN = 100

MP_CHAIN = """
import sys, time, ncnn_mp
chain, runs = int(sys.argv[1]), int(sys.argv[2])

class Noop(ncnn_mp.Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
    def forward_inplace(self, blob, opt):
        pass

lines = ["Input data 0 1 data 0=4"]
for i in range(chain):
    lines.append("Noop n%d 1 1 %s b%d" % (i, "data" if i == 0 else "b%d" % (i - 1), i))
net = ncnn_mp.Net()
net.opt.num_threads = 1
net.register_custom_layer("Noop", Noop)
net.load_param_mem("7767517\\n%d %d\\n%s\\n" % (len(lines), len(lines), "\\n".join(lines)))
net.load_model(ncnn_mp.DataReader(zeros=True))
out = "b%d" % (chain - 1) if chain else "data"
x = ncnn_mp.Mat(4)
x.fill(1)
t0 = time.ticks_us()
for _ in range(runs):
    ex = net.create_extractor()
    ex.input("data", x)
    ex.extract(out)
print(time.ticks_diff(time.ticks_us(), t0) / runs)
"""

PY_CHAIN = """
import sys, time, ncnn
chain, runs = int(sys.argv[1]), int(sys.argv[2])
made = []

class Noop(ncnn.Layer):
    def __init__(self):
        ncnn.Layer.__init__(self)
        self.one_blob_only = True
        self.support_inplace = True
    def forward_inplace(self, blob, opt):
        return 0

def create():
    layer = Noop()
    made.append(layer)  # the wheel needs Python to keep its layers alive
    return layer

lines = ["Input data 0 1 data 0=4"]
for i in range(chain):
    lines.append("Noop n%d 1 1 %s b%d" % (i, "data" if i == 0 else "b%d" % (i - 1), i))
net = ncnn.Net()
net.opt.num_threads = 1
net.register_custom_layer("Noop", create, lambda layer: None)
net.load_param_mem("7767517\\n%d %d\\n%s\\n" % (len(lines), len(lines), "\\n".join(lines)))
net.load_model(ncnn.DataReaderFromEmpty())
out = "b%d" % (chain - 1) if chain else "data"
x = ncnn.Mat(4)
x.fill(1.0)
t0 = time.perf_counter()
for _ in range(runs):
    ex = net.create_extractor()
    ex.input("data", x)
    ex.extract(out)
print((time.perf_counter() - t0) / runs * 1e6)
"""

MP_RELU = """
import sys, time, micropython, ncnn_mp

@micropython.viper
def relu_f32(buf, n: int):
    p = ptr32(buf)
    for i in range(n):
        if p[i] >> 31:
            p[i] = 0

class PyReLU(ncnn_mp.Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
    def forward_inplace(self, blob, opt):
        for i in range(len(blob)):
            if blob[i] < 0:
                blob[i] = 0.0

class ViperReLU(PyReLU):
    def forward_inplace(self, blob, opt):
        relu_f32(memoryview(blob), len(blob))

kind, runs = sys.argv[1], int(sys.argv[2])
net = ncnn_mp.Net()
net.opt.num_threads = 1
if kind != "builtin":
    net.register_custom_layer("ReLU", PyReLU if kind == "python" else ViperReLU)
net.load_param_mem("7767517\\n2 2\\nInput data 0 1 data 0=64 1=64 2=16\\nReLU r 1 1 data out\\n")
net.load_model(ncnn_mp.DataReader(zeros=True))
x = ncnn_mp.Mat(64, 64, 16)
for i in range(len(x)):
    x[i] = (i % 7) - 3.0
t0 = time.ticks_us()
for _ in range(runs):
    ex = net.create_extractor()
    ex.input("data", x)
    ex.extract("out")
print(time.ticks_diff(time.ticks_us(), t0) / runs)
"""


def run(cmd: list[str], script: str, *args: object) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(script)
    try:
        out = subprocess.run([*cmd, f.name, *map(str, args)], capture_output=True, text=True, check=True)
        return float(out.stdout.strip().splitlines()[-1])
    finally:
        os.unlink(f.name)


def instructions(cmd: list[str], script: str, *args: object) -> int:
    """Total instructions of one process under callgrind."""
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "s.py"
        src.write_text(script)
        out = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={d}/cg.out",
                              *cmd, str(src), *map(str, args)], capture_output=True, text=True, check=True)
        return int(re.search(r"Collected : (\d+)", out.stderr).group(1))  # type: ignore[union-attr]


def per_layer_instructions(cmd: list[str], script: str) -> float:
    # Differences cancel start-up: (chain, many runs) - (chain, few runs), then minus the chain-free net.
    few, many = 10, 60

    def per_extract(chain: int) -> float:
        return (instructions(cmd, script, chain, many) - instructions(cmd, script, chain, few)) / (many - few)

    return (per_extract(CHAIN) - per_extract(0)) / CHAIN


def per_layer_us(cmd: list[str], script: str) -> float:
    runs = 300
    best = min(run(cmd, script, CHAIN, runs) - run(cmd, script, 0, runs) for _ in range(3))
    return best / CHAIN


def main(firmware: str) -> None:
    mp, py = [firmware], [sys.executable]
    print(f"machine: {os.uname().machine}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}")
    print()
    print("| one no-op custom-layer call | instructions (callgrind) | microseconds |")
    print("|---|---|---|")
    mp_i, py_i = per_layer_instructions(mp, MP_CHAIN), per_layer_instructions(py, PY_CHAIN)
    print(f"| ncnn_mp (MicroPython) | {mp_i:,.0f} | {per_layer_us(mp, MP_CHAIN):.2f} |")
    print(f"| CPython `ncnn` wheel | {py_i:,.0f} | {per_layer_us(py, PY_CHAIN):.2f} |")
    print(f"| ratio ncnn_mp / wheel | {mp_i / py_i:.2f} | |")
    print()
    print("| ReLU on a 64x64x16 float blob (ncnn_mp) | microseconds per extract | vs built-in |")
    print("|---|---|---|")
    times = {k: min(run(mp, MP_RELU, k, runs) for _ in range(3))
             for k, runs in (("builtin", 200), ("viper", 200), ("python", 5))}
    for kind, label in (("builtin", "ncnn's built-in ReLU"), ("viper", "custom layer, @micropython.viper"),
                        ("python", "custom layer, plain Python")):
        print(f"| {label} | {times[kind]:.0f} | {times[kind] / times['builtin']:.1f}x |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])

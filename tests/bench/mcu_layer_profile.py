# SPDX-License-Identifier: MIT
"""Where a real model's instructions go on a QEMU board, layer by layer (ncnn_mp_lib/netprofile.py's
walk on the board, -icount: emulated instructions, less the walk's own cost per extract),
summed by layer type; for the convolutions
and inner products a least-squares split of each layer's instructions into a cost per
MAC, per input element (quantize and pad, or the padded copy) and per output element
(the epilogue: dequantize, bias, activation, store).

    make py SCRIPT=tests/bench/mcu_layer_profile.py ARGS="[qemu|rv32] [retinaface-int8|retinaface-int8c|
                 retinaface-fp32|nanodet|nanodet-int8|nanodet-int8c|mnist-int8|mnist-int8c]"

(int8c: int8 between layers, quantize_int8 --chain. `make py` runs it in the test venv with the tests'
imports: pyproject.toml's pythonpath.)
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

from ci.firmware import build_firmware
from ci.qemu import run_script
from model_macs import WEIGHT_KEY, layers
from ncnn_mp_tools.romfs_pack import pack

# (Smaller than the tests' 160: the walk keeps every blob, which 160x160 does not fit in the
# boards' 3.4 MiB. Per MAC and per element the costs are the same.)
PROFILE_SIDE = 96

BOARD_SCRIPT = """
import gc, json, ncnn_mp, qemu_board
net = ncnn_mp.Net()
net.load_param(ncnn_mp.DataReader(from_memory=memoryview(open("/rom/m.param", "rb"))))
net.load_model(memoryview(open("/rom/m.bin", "rb")), copy=False)
x = ncnn_mp.Mat(%d, %d, %d)
x.fill(0.5)
blobs = net.blobs()
clock = qemu_board.time_ns
# netprofile.py's walk (one Extractor, each layer's tops in net order), less what the walk
# itself costs: the same tops extracted again (ncnn hands back what it kept: the extract's
# own work, and an int8 blob's conversion to float, which a real extract does not do)
with net.create_extractor() as ex:
    ex.input(%r, x)
    for layer in net.layers():
        if layer["type"] == "Input":
            continue
        names = [blobs[top]["name"] for top in layer["tops"]]
        t0 = clock()
        outs = [ex.extract(n) for n in names]
        t1 = clock()
        again = [ex.extract(n) for n in names]
        t2 = clock()
        shapes = [(m.w, m.h, m.c) for m in outs]
        print(json.dumps([layer["name"], layer["type"], max(0, (t1 - t0) - (t2 - t1)), shapes]))
        outs = again = None
        gc.collect()  # (the float copies of int8 blobs: freed now, not when the heap fills)
"""


def model(which: str, folder: Path) -> tuple[Path, Path, str, tuple[int, int, int]]:
    from real_models import mnist_int8, nanodet_int8, nanodet_model, retinaface_models, shared_models

    if which.startswith("retinaface"):
        param, weights = retinaface_models(folder)[which.split("-")[1]]
        return param, weights, "data", (PROFILE_SIDE, PROFILE_SIDE, 3)
    if which.startswith("nanodet"):
        fp32 = nanodet_model(folder)
        files = fp32 if which == "nanodet" else nanodet_int8(folder, fp32)[which.split("-")[1]]
        return (*files, "input.1", (PROFILE_SIDE, 64, 3))  # (multiples of 32: its Adds join strides 8 to 32)
    if which.startswith("mnist-int8"):
        return (*mnist_int8(folder, chain=which.endswith("c")), "data", (28, 28, 1))
    mnist = shared_models("mnist", "mnist.param", "mnist.bin")
    return mnist / "mnist.param", mnist / "mnist.bin", "data", (28, 28, 1)


def kernel_of(params: dict[str, str]) -> str:
    """A convolution's kernel and stride as "3x3/2"."""
    k = params.get("1", "1")
    return f"{k}x{params.get('11', k)}/{params.get('3', '1')}"


def main(board: str, which: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        param, weights, input_name, (w, h, c) = model(which, Path(tmp))
        image = Path(tmp) / "romfs.img"
        image.write_bytes(pack({"m.param": param.read_bytes(), "m.bin": weights.read_bytes()}))
        source = (BOARD_SCRIPT % (w, h, c, input_name)).encode()
        r = run_script(board, build_firmware(board), source, timeout=3600, icount=True, romfs=image)
        if r.returncode != 0:
            print(r.output, file=sys.stderr)
            return 1
        rows = [json.loads(line) for line in r.output.splitlines() if line.startswith("[")]
        shapes = {}  # blob name -> (w, h, c) on the board
        info = {}
        for kind, bottoms, tops, params in layers(param):
            info[tops[0] if tops else ""] = (kind, bottoms, params)
        by_layer = {}
        for (name, kind, spent, outs), (lkind, bottoms, tops, params) in zip(rows, [lt for lt in layers(param)
                                                                                    if lt[0] != "Input"]):
            for top, shape in zip(tops, outs):
                shapes[top] = shape
            by_layer[name] = (kind, spent, outs, bottoms, params)
    total = sum(r[2] for r in rows)
    by_type: dict[str, int] = defaultdict(int)
    for name, kind, spent, outs in rows:
        by_type[kind] += spent
    print(f"### {which} on {board}: {total:,} instructions in the per-layer walk\n")
    print("| layer type | instructions | share |")
    print("|---|---:|---:|")
    for kind, spent in sorted(by_type.items(), key=lambda kv: -kv[1]):
        print(f"| {kind} | {spent:,} | {100 * spent / total:.1f}% |")
    # least squares per kind: instructions = a * MACs + b * input elements + c * output elements
    for kind in ("Convolution", "ConvolutionDepthWise", "InnerProduct"):
        rows_k = []
        for name, (k, spent, outs, bottoms, params) in by_layer.items():
            if k != kind:
                continue
            out = outs[0]
            inp = shapes.get(bottoms[0], (w, h, c))
            size = int(params.get(WEIGHT_KEY[kind], "0"))
            out_elems = int(np.prod(out))
            macs = size * (out[0] * out[1] if kind != "InnerProduct" else 1)
            rows_k.append((macs, int(np.prod(inp)), out_elems, spent))
            rows_k[-1] += (name, kernel_of(params))
        if len(rows_k) < 3:
            continue
        a = np.array([r[:3] for r in rows_k], dtype=float)
        y = np.array([r[3] for r in rows_k], dtype=float)
        if "--layers" in sys.argv:  # the costliest layers, each alone
            print(f"\n| {kind} | kernel/stride | MACs | instructions | per MAC |\n|---|---|---:|---:|---:|")
            for macs_l, _, _, spent, name, kernel in sorted(rows_k, key=lambda r: -r[3])[:12]:
                print(f"| {name} | {kernel} | {macs_l:,} | {spent:,} | {spent / max(macs_l, 1):.2f} |")
        coef, *_ = np.linalg.lstsq(a, y, rcond=None)
        macs, ins, outs_n = a.sum(axis=0)
        print(f"\n{kind}: {len(rows_k)} layers, {int(macs):,} MACs, {y.sum():,.0f} instructions "
              f"({y.sum() / macs:.2f} per MAC). Fit: {coef[0]:.2f} per MAC, {coef[1]:.1f} per input element, "
              f"{coef[2]:.1f} per output element: MAC loops {coef[0] * macs / y.sum():.0%}, input "
              f"{coef[1] * ins / y.sum():.0%}, epilogue {coef[2] * outs_n / y.sum():.0%}")
    return 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]  # (--layers: the costliest layers too)
    sys.exit(main(args[0] if args else "qemu", args[1] if len(args) > 1 else "retinaface-int8"))

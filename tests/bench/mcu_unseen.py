# SPDX-License-Identifier: MIT
"""Detectors the kernels were not tuned on, measured on the boards as `make mcu-report` measures
RetinaFace and NanoDet-m: ncnn's benchmark structures yolo-fastest-1.1 and FastestDet
(../shared/models/bench: structures without weights) given seeded random weights, quantized with
int8 between layers by the project's own quantizer (quantize_int8 --chain, calibrated on photos),
run in place from the board's flash; instructions per multiply-accumulate, whole network.

    make py SCRIPT=tests/bench/mcu_unseen.py [ARGS="[--board=qemu ...] [--side=160]"]

(Random weights give random detections, but the same layers, shapes and requantizations as
trained ones: what the instructions per MAC depend on. Dead channels, which a trained model
has and these do not, would make it cheaper.)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import ncnn
import numpy as np

from ci.firmware import build_firmware, target
from ncnn_mp_tools import quantize_int8 as qz
from ncnn_mp_tools.preflight import probe

from conftest import shared_models
from model_macs import count_macs

DETECTORS = {"yolo-fastest-1.1": ("data", 1 / 255), "FastestDet": ("in0", 1 / 255)}


def random_weights(param: Path, seed: int) -> qz.Model:
    """The structure with weights drawn at random: fan-in scaled, so activations keep their size
    through the layers (a calibration of a network whose values vanish or explode says little)."""
    rng = np.random.default_rng(seed)
    layers, blob_count = qz.parse_param(param.read_text())
    # (yolo's box decoding, a layer the boards' ncnn leaves out: run on the host, as the project's
    # decoders of NanoDet-m and RetinaFace run in Python)
    layers = [layer for layer in layers if layer.type != "Yolov3DetectionOutput"]
    for layer in layers:
        specs = qz.LAYOUTS[layer.type](layer) if layer.type in qz.LAYOUTS else []
        loads = []
        for role, type_, count in specs:
            rows = max(1, layer.get_int(0, 1))
            if "weight" in role:
                fan_in = max(1, count // rows)
                values = rng.normal(0.0, np.sqrt(2.0 / fan_in), count)
            elif "var" in role:
                values = rng.uniform(0.5, 1.5, count)
            elif "slope" in role or "scale" in role:
                values = rng.uniform(0.5, 1.5, count)
            else:
                values = rng.normal(0.0, 0.1, count)
            loads.append(qz.Load(role, type_, values.astype(np.float32)))
        layer.loads = loads
    return qz.model_check(qz.Model(layers, blob_count))


def photo_samples(side: int, norm: float) -> list[np.ndarray]:
    import skimage.data

    out = []
    for rgb in (skimage.data.chelsea(), skimage.data.coffee(), skimage.data.astronaut(), skimage.data.rocket()):
        h, w = rgb.shape[:2]
        m = ncnn.Mat.from_pixels_resize(np.ascontiguousarray(rgb), ncnn.Mat.PixelType.PIXEL_RGB, w, h, side, side)
        out.append(np.array(m, dtype=np.float32) * np.float32(norm))
    return out


def main() -> int:
    boards = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--board=")] or ["qemu", "rv32"]
    side = int(next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--side=")), "160"))
    bench = shared_models("bench", *(f"{name}.param" for name in DETECTORS))
    elves = {b: build_firmware(b) for b in boards}
    print(f"\n| board | detector (random weights, int8 chain) | input | instructions / extract | MACs | "
          f"instructions / MAC |\n|---|---|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for seed, (name, (input_name, norm)) in enumerate(DETECTORS.items()):
            fp32 = (Path(tmp) / f"{name}.param", Path(tmp) / f"{name}.bin")
            qz.write_model(random_weights(bench / f"{name}.param", seed), *fp32)
            chain = (Path(tmp) / f"{name}8c.param", Path(tmp) / f"{name}8c.bin")
            qz.quantize_files(*fp32, *chain, samples=photo_samples(side, norm), input_name=input_name, chain=True)
            macs = count_macs(fp32[0], fp32[1], input_name, (side, side, 3))[0]
            model = {"param": "/rom/m.param", "bin": "/rom/m.bin", "binary_param": False, "outputs": [],
                     "inputs": [(input_name, (side, side, 3))], "rom": ("m.param", "m.bin")}
            config = {"opt": {"num_threads": 1}, "copy": False, "models": [model]}
            files = {"m.param": chain[0].read_bytes(), "m.bin": chain[1].read_bytes()}
            for board in boards:
                (r,) = probe(target(board, build=False), config, files, timeout=1800)
                if "failed" in r:
                    print(f"{name} failed on the {board} board:\n{r['failed']}", file=sys.stderr)
                    return 1
                print(f"| {board} | {name} | {side}x{side} | {r['instructions']:,} | {macs:,} | "
                      f"{r['instructions'] / macs:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

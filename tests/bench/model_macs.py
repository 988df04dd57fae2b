# SPDX-License-Identifier: MIT
"""A model's multiply-accumulates per extract, as the MCU issue counts them: Convolution and
ConvolutionDepthWise: weights x output w x h; InnerProduct: weights x rows (1, or a 2-D
input's h); Deconvolution(DepthWise): weights x input w x h. Blob shapes from extracting
every blob in the CPython wheel; the layers' weight counts from the .param text.

    count_macs(param, weights, "data", (w, h, c)) -> (total, {layer type: MACs})
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

WEIGHT_KEY = {"Convolution": "6", "ConvolutionDepthWise": "6", "InnerProduct": "2", "Deconvolution": "6",
              "DeconvolutionDepthWise": "6"}


def layers(param: Path) -> list[tuple[str, list[str], list[str], dict[str, str]]]:
    """(type, bottoms, tops, params) of each layer of a text .param."""
    lines = param.read_text().split("\n")
    _, counts = lines[0], lines[1].split()
    out = []
    for line in lines[2:2 + int(counts[0])]:
        f = line.split()
        nb, nt = int(f[2]), int(f[3])
        bottoms, tops = f[4:4 + nb], f[4 + nb:4 + nb + nt]
        params = dict(kv.split("=", 1) for kv in f[4 + nb + nt:])
        out.append((f[0], bottoms, tops, params))
    return out


def count_macs(param: Path, weights: Path, input_name: str, shape: tuple[int, int, int]) -> tuple[int, dict[str, int]]:
    import ncnn
    import numpy as np

    net = ncnn.Net()
    net.opt.num_threads = 1
    assert net.load_param(str(param)) == 0 and net.load_model(str(weights)) == 0
    w, h, c = shape
    x = np.full((c, h, w), 0.5, dtype=np.float32)
    by_type: dict[str, int] = defaultdict(int)
    with net.create_extractor() as ex:
        ex.input(input_name, ncnn.Mat(x).clone())
        for kind, bottoms, tops, params in layers(param):
            if kind not in WEIGHT_KEY:
                continue
            size = int(params.get(WEIGHT_KEY[kind], "0"))
            blob = bottoms[0] if kind.startswith("Deconvolution") else tops[0]
            ret, m = ex.extract(blob)
            assert ret == 0, (kind, blob)
            if kind == "InnerProduct":
                by_type[kind] += size * (m.h if m.dims == 2 else 1)
            else:
                by_type[kind] += size * m.w * m.h
    return sum(by_type.values()), dict(by_type)

# SPDX-License-Identifier: MIT
"""Built-in layers run standalone (Layer(type=...)) agree with the CPython `ncnn` wheel on the same inputs."""

from __future__ import annotations

import json
from pathlib import Path

import ncnn
import numpy as np
import pytest

from conftest import MicroPython

# type, params {id: value}, whether the input must be positive
LAYERS: list[tuple[str, dict[int, float | int], bool]] = [
    ("ReLU", {}, False),
    ("ReLU", {0: 0.1}, False),  # leaky
    ("Sigmoid", {}, False),
    ("TanH", {}, False),
    ("AbsVal", {}, False),
    ("ELU", {0: 0.5}, False),
    ("Clip", {0: -0.5, 1: 0.75}, False),
    ("Softmax", {0: 0, 1: 1}, False),
    ("Exp", {}, False),
    ("Log", {}, True),
    ("Power", {0: 2.0, 1: 0.5, 2: 0.25}, False),
    ("BNLL", {}, False),
    ("HardSigmoid", {0: 0.2, 1: 0.5}, False),
    ("HardSwish", {}, False),
    ("Swish", {}, False),
    ("Mish", {}, False),
    ("GELU", {}, False),
    ("SELU", {}, False),
    ("Dropout", {0: 0.5}, False),
    ("Flatten", {}, False),
    ("Threshold", {0: 0.3}, False),
]

SHAPE = (3, 4, 5)  # c, h, w

MP_RUN = """
import ncnn_mp, json, sys
with open(sys.argv[1]) as f:
    spec = json.load(f)
with open(sys.argv[2], 'rb') as f:
    raw = f.read()
opt = ncnn_mp.Option()
opt.num_threads = 1
opt.use_packing_layout = False
out = []
for kind, params, positive in spec:
    layer = ncnn_mp.Layer(type=kind)
    pd = ncnn_mp.ParamDict()
    for k, v in params.items():
        pd.set(int(k), v)
    layer.load_param(pd)
    x = ncnn_mp.Mat(5, 4, 3)
    x.from_bytes(raw[(1 if positive else 0) * 240:][:240])
    y = layer.forward(x, opt)
    flat = y.reshape(y.w * y.h * y.c)  # named: a memoryview does not keep its Mat alive
    out.append([y.dims, y.w, y.h, y.c, list(memoryview(flat))])
print(json.dumps(out))
"""


def wheel_forward(kind: str, params: dict[int, float | int], x: np.ndarray) -> tuple[list[int], np.ndarray]:
    if kind == "Flatten":
        # The wheel's Layer.forward(Mat, Mat, opt) segfaults (even for ReLU), and
        # Flatten has no in-place form: its result is plain enough for numpy.
        return [1, x.size, 1, 1], x.reshape(-1)
    layer = ncnn.create_layer(kind)
    pd = ncnn.ParamDict()
    for k, v in params.items():
        pd.set(k, v)
    assert layer.load_param(pd) == 0
    opt = ncnn.Option()
    opt.num_threads = 1
    opt.use_packing_layout = False
    assert layer.create_pipeline(opt) == 0
    assert layer.support_inplace, kind
    top = ncnn.Mat(x).clone()
    assert layer.forward_inplace(top, opt) == 0
    return [top.dims, top.w, top.h, top.c], np.array(top).reshape(-1)


def test_builtin_layers_match_wheel(micropython: MicroPython, tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    signed = rng.uniform(-2, 2, SHAPE).astype(np.float32)
    positive = rng.uniform(0.1, 3, SHAPE).astype(np.float32)
    inputs = tmp_path / "inputs.f32"
    inputs.write_bytes(signed.tobytes() + positive.tobytes())
    spec = tmp_path / "spec.json"  # a file: the Unix port interns argv, and caps that at 255 bytes
    spec.write_text(json.dumps([[kind, {str(k): v for k, v in params.items()}, pos] for kind, params, pos in LAYERS]))
    ours = json.loads(micropython.check(MP_RUN, str(spec), str(inputs)))
    assert len(ours) == len(LAYERS) >= 15
    for (kind, params, pos), (dims, w, h, c, values) in zip(LAYERS, ours):
        shape, theirs = wheel_forward(kind, params, positive if pos else signed)
        assert [dims, w, h, c] == shape, kind
        assert np.abs(np.array(values, dtype=np.float32) - theirs).max() < 1e-5, (kind, params)


@pytest.mark.parametrize("kind", ["NoSuchLayer", ""])
def test_unknown_layer_type_raises(micropython: MicroPython, kind: str) -> None:
    out = micropython.check(f"import ncnn_mp\ntry:\n    ncnn_mp.Layer(type={kind!r})\n"
                            "except ValueError as e:\n    print(e)\n")
    assert f"Layer(): ncnn has no layer type '{kind}'" in out

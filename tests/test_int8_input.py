# SPDX-License-Identifier: MIT
"""A camera frame straight to a model's int8 input (Mat.from_pixels_int8, ncnn_mp/seam/cxx_pixels_int8.cpp).

Each int8 value is recomputed here in numpy, bit for bit: the frame's pixels and the bilinear
resize as tests/test_camera.py models them (integer arithmetic, the resize's float exactly
sum / 2^22), then ncnn's substract_mean_normalize and its quantize as float32 operations, one
rounding each (numpy float32 is IEEE single), then round half away from zero, clamped to
[-127, 127]. tests/mp/ncnn_mp_int8_input.py shows the same Mats give a net the float path's
outputs on every firmware; here the desktop also checks the numbers themselves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import MicroPython
from test_camera import BPP, GRAY, NV12, NV21, RGB, RGB565, RGB565_BE, YUYV, expand, mat_channels, resize

BGR = 2
SNIPPET = r"""
import sys, ncnn_mp
frame = open(sys.argv[1], "rb").read()
t, w, h, tw, th = (int(v) for v in sys.argv[2:7])
scale = float(sys.argv[7])
mean = None if sys.argv[8] == "-" else [float(v) for v in sys.argv[8].split(",")]
norm = None if sys.argv[9] == "-" else [float(v) for v in sys.argv[9].split(",")]
m = ncnn_mp.Mat.from_pixels_int8(frame, t, w, h, tw, th, scale, mean, norm)
print(m.elemsize, m.w, m.h, m.c, m.to_bytes().hex())
"""


def float2int8(x: np.ndarray) -> np.ndarray:
    """ncnn's float2int8: round half away from zero (exact in float64 for a float32), clamp."""
    r = np.sign(x) * np.floor(np.abs(x.astype(np.float64)) + 0.5)
    return np.clip(r, -127, 127).astype(np.int8)


def model(v: np.ndarray, scale: float, mean: list[float] | None, norm: list[float] | None) -> np.ndarray:
    """ncnn's float path on the resized values v (c, h, w float32): Bias (v + -mean), Scale
    (v * norm, or v * norm + -mean * norm), then the layer's quantize, float32 throughout."""
    f32 = np.float32
    c = v.shape[0]
    m = None if mean is None else np.array(mean, f32).reshape(c, 1, 1)
    n = None if norm is None else np.array(norm, f32).reshape(c, 1, 1)
    if m is not None and n is None:
        v = v + (-m)
    elif n is not None:
        v = v * n
        if m is not None:
            v = v + (-m) * n
    return float2int8(v * f32(scale))


def plain_pixels(frame: bytes, fmt: int, w: int, h: int) -> np.ndarray:
    """An RGB or BGR frame's pixels as (h, w, 4) RGBA."""
    px = np.frombuffer(frame, np.uint8).reshape(h, w, 3).astype(np.int64)
    if fmt == BGR:
        px = px[..., ::-1]
    return np.concatenate([px, np.full((h, w, 1), 255)], -1)


CASES = [
    (RGB565_BE, RGB, 41, 29, 32, 24), (RGB565, BGR, 30, 20, 30, 20), (YUYV, RGB, 26, 18, 11, 37),
    (NV12, GRAY, 24, 16, 7, 5), (NV21, RGB, 24, 16, 48, 32), (RGB, RGB, 21, 13, 16, 16), (BGR, RGB, 13, 9, 5, 7),
]


@pytest.mark.parametrize("fmt,order,w,h,tw,th", CASES)
def test_from_pixels_int8_equals_numpy(micropython: MicroPython, tmp_path: Path, fmt: int, order: int, w: int,
                                       h: int, tw: int, th: int) -> None:
    rng = np.random.default_rng(fmt * 100 + tw)
    rows = h * 3 // 2 if fmt in (NV12, NV21) else h
    bpp = BPP.get(fmt, 3)
    frame = rng.integers(0, 256, rows * w * bpp).astype(np.uint8).tobytes()
    path = tmp_path / "frame.bin"
    path.write_bytes(frame)
    if fmt in (RGB, BGR):
        rgba = plain_pixels(frame, fmt, w, h)
        luma = (rgba[..., 0] * 77 + rgba[..., 1] * 150 + rgba[..., 2] * 29) >> 8
        t = fmt | (order << 16 if order != fmt else 0)
    else:
        rgba, luma = expand(frame, fmt, w, h, w * bpp)
        t = fmt | order << 16
    values = resize(mat_channels(rgba, luma, order), tw, th)
    c = values.shape[0]
    checked = 0
    for scale, mean, norm in ((0.5, None, None), (37.25, [127.5] * c, None), (1.7, None, [1 / 58.4] * c),
                              (61.8, [103.53, 116.28, 123.675][:c], [0.017429, 0.017507, 0.017125][:c]),
                              (300.0, [0.0] * c, [1.0] * c)):  # (300: most values clamp to 127)
        args = [str(path), str(t), str(w), str(h), str(tw), str(th), repr(scale),
                ",".join(map(repr, mean)) if mean else "-", ",".join(map(repr, norm)) if norm else "-"]
        elemsize, mw, mh, mc, data = micropython.check(SNIPPET, *args).split()
        assert (int(elemsize), int(mw), int(mh), int(mc)) == (1, tw, th, c)
        got = np.frombuffer(bytes.fromhex(data), np.int8).reshape(c, th, tw)
        want = model(values, scale, mean, norm)
        assert np.array_equal(got, want), f"{int((got != want).sum())} of {got.size} differ"
        checked += got.size
    print(f"{checked} int8 values equal numpy's")

# SPDX-License-Identifier: MIT
"""Camera frames and screens (ncnn_mp/binding/mat_camera.c) against numpy, ncnn's own YUV code and the wheel.

tests/mp/ncnn_mp_mat_camera.py converts every camera format (RGB565 in both byte orders, YUYV,
NV12, NV21) into every Mat order (RGB, BGR, GRAY, RGBA) with from_pixels and three
from_pixels_resize targets, and back with to_pixels, packed and with a stride; run with a path
it writes every input and result there. Here each result is recomputed in numpy from the
documented arithmetic (docs/usage.md#camera-frames-and-screens) and must be equal, bit for bit:
the RGB565 and GRAY unpacking and packing, the YUV conversions and the resize are integer
arithmetic, and the resize's float is sum / 2^22 exactly. Two looser checks say the arithmetic is
the right one: the resize within 255/2048 of a float64 bilinear resize of the same pixels, and the
YUV conversion within 2 of BT.601's full-range float formula. The wheel (CPython ncnn) has no
camera format, but it has from_pixels_resize: frames whose pixels it can take as RGB or GRAY
(RGB565 values that unpack exactly, YUV with neutral chroma) resize within 1 of it. ncnn's
own yuv420sp2rgb (not in the wheel, so built here against the firmware's ncnn) gives the same
bytes as NV21/NV12 -> RGB.
The same script's digests on the boards (tests/test_mp_scripts.py) equal Unix's."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import ncnn
import numpy as np
import pytest

from conftest import MP_TESTS, REPO, MicroPython, shared_models

SCRIPT = MP_TESTS / "ncnn_mp_mat_camera.py"
RGB565, RGB565_BE, YUYV, NV12, NV21 = 16, 17, 18, 19, 20
RGB, BGR, GRAY, RGBA, BGRA = 1, 2, 3, 4, 5
BPP = {RGB565: 2, RGB565_BE: 2, YUYV: 2, NV12: 1, NV21: 1}
ONE = 2048  # the resize's weights are in 1/2048


def expand(frame: bytes, fmt: int, w: int, h: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """The frame's pixels as int arrays: RGBA (h, w, 4) and luma (h, w)."""
    raw = np.frombuffer(frame, np.uint8).astype(np.int64)
    rows = np.stack([raw[y * stride:y * stride + w * BPP[fmt]] for y in range(h)])
    if fmt in (RGB565, RGB565_BE):
        lo, hi = (rows[:, 0::2], rows[:, 1::2]) if fmt == RGB565 else (rows[:, 1::2], rows[:, 0::2])
        v = lo | hi << 8
        r, g, b = v >> 11, (v >> 5) & 63, v & 31
        rgb = [r << 3 | r >> 2, g << 2 | g >> 4, b << 3 | b >> 2]
        luma = (rgb[0] * 77 + rgb[1] * 150 + rgb[2] * 29) >> 8
    else:
        if fmt == YUYV:
            y = rows[:, 0::2]
            u = np.repeat(rows[:, 1::4], 2, axis=1)
            v = np.repeat(rows[:, 3::4], 2, axis=1)
        else:
            chroma = np.stack([raw[stride * h + (yy // 2) * stride:][:w] for yy in range(h)])
            y = rows
            first, second = np.repeat(chroma[:, 0::2], 2, axis=1), np.repeat(chroma[:, 1::2], 2, axis=1)
            u, v = (first, second) if fmt == NV12 else (second, first)
        rgb = yuv_to_rgb(y, u, v)
        luma = y
    alpha = np.full_like(luma, 255)
    return np.stack(rgb + [alpha], axis=-1), luma


def yuv_to_rgb(y: np.ndarray, u: np.ndarray, v: np.ndarray) -> list[np.ndarray]:
    """BT.601 full range in ncnn's fixed point (1/64)."""
    u, v, yy = u - 128, v - 128, y << 6
    return [np.clip(x >> 6, 0, 255) for x in (yy + 90 * v, yy - 46 * v - 22 * u, yy + 113 * u)]


def mat_channels(rgba: np.ndarray, luma: np.ndarray, order: int) -> np.ndarray:
    """(c, h, w) in the Mat's order."""
    if order == GRAY:
        return luma[None]
    idx = {RGB: [0, 1, 2], BGR: [2, 1, 0], RGBA: [0, 1, 2, 3], BGRA: [2, 1, 0, 3]}[order]
    return np.moveaxis(rgba[..., idx], -1, 0)


def place(d: np.ndarray, src: int, dst: int) -> tuple[np.ndarray, np.ndarray]:
    """Source pixel and weight (1/2048) of target pixels d, as mat_camera.c places them."""
    num = (2 * d + 1) * src - dst
    s = np.where(num > 0, num // (2 * dst), 0)
    wt = np.where(num > 0, ((num % (2 * dst)) * ONE + dst) // (2 * dst), 0)
    edge = s >= src - 1
    return np.where(edge, src - 1, s), np.where(edge, 0, wt)


def resize(ch: np.ndarray, tw: int, th: int) -> np.ndarray:
    """mat_camera.c's bilinear resize, in the same integers, as float32."""
    _, h, w = ch.shape
    sx, wx = place(np.arange(tw), w, tw)
    sy, wy = place(np.arange(th), h, th)
    sx1, sy1 = np.minimum(sx + 1, w - 1), np.minimum(sy + 1, h - 1)
    p = ch.astype(np.int64)
    top = p[:, sy][:, :, sx] * (ONE - wx) + p[:, sy][:, :, sx1] * wx
    bottom = p[:, sy1][:, :, sx] * (ONE - wx) + p[:, sy1][:, :, sx1] * wx
    total = top * (ONE - wy)[:, None] + bottom * wy[:, None]
    return total.astype(np.float32) * np.float32(1 / (ONE * ONE))


def float_bilinear(ch: np.ndarray, tw: int, th: int) -> np.ndarray:
    """A textbook bilinear resize in float64 (pixel centres, edges clamped)."""
    _, h, w = ch.shape

    def axis(n_src: int, n_dst: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        f = np.clip((np.arange(n_dst) + 0.5) * n_src / n_dst - 0.5, 0, n_src - 1)
        i0 = np.floor(f).astype(int)
        return i0, np.minimum(i0 + 1, n_src - 1), f - i0

    x0, x1, fx = axis(w, tw)
    y0, y1, fy = axis(h, th)
    p = ch.astype(np.float64)
    top = p[:, y0][:, :, x0] * (1 - fx) + p[:, y0][:, :, x1] * fx
    bottom = p[:, y1][:, :, x0] * (1 - fx) + p[:, y1][:, :, x1] * fx
    return top * (1 - fy)[:, None] + bottom * fy[:, None]


def to_u8(m: np.ndarray) -> np.ndarray:
    """A Mat value as a byte, as ncnn's to_pixels makes it: truncated, clamped."""
    return np.where(m > 0, np.where(m < 255, np.trunc(m), 255), 0).astype(np.int64)


def frame_out(mat: np.ndarray, fmt: int, order: int, w: int, h: int, stride: int, pad_from: bytes) -> bytes:
    """to_pixels' frame of the (c, h, w) float Mat `mat` in Mat order `order`, written over pad_from."""
    v = to_u8(mat)
    if order == GRAY:
        r = g = b = v[0]
    else:
        r, g, b = (v[2], v[1], v[0]) if order in (BGR, BGRA) else (v[0], v[1], v[2])
    out = bytearray(pad_from)
    luma = (r * 77 + g * 150 + b * 29) >> 8
    if order == GRAY:
        luma = v[0]
    cu = (-43 * r - 85 * g + 128 * b + 32768) >> 8
    cv = (128 * r - 107 * g - 21 * b + 32768) >> 8
    for y in range(h):
        row = y * stride
        if fmt in (RGB565, RGB565_BE):
            px = (r[y] >> 3) << 11 | (g[y] >> 2) << 5 | b[y] >> 3
            lo, hi = px & 255, px >> 8
            pair = np.stack([lo, hi] if fmt == RGB565 else [hi, lo], axis=-1).reshape(-1)
            out[row:row + 2 * w] = bytes(pair.astype(np.uint8))
        elif fmt == YUYV:
            u = (cu[y, 0::2] + cu[y, 1::2] + 1) >> 1
            vv = (cv[y, 0::2] + cv[y, 1::2] + 1) >> 1
            quad = np.stack([luma[y, 0::2], u, luma[y, 1::2], vv], axis=-1).reshape(-1)
            out[row:row + 2 * w] = bytes(quad.astype(np.uint8))
        else:
            out[row:row + w] = bytes(luma[y].astype(np.uint8))
    if fmt in (NV12, NV21):
        for by in range(h // 2):
            ys = slice(2 * by, 2 * by + 2)
            u = (cu[ys, 0::2] + cu[ys, 1::2]).sum(axis=0)
            vv = (cv[ys, 0::2] + cv[ys, 1::2]).sum(axis=0)
            u, vv = (u + 2) >> 2, (vv + 2) >> 2
            pair = np.stack([u, vv] if fmt == NV12 else [vv, u], axis=-1).reshape(-1)
            start = stride * h + by * stride
            out[start:start + w] = bytes(pair.astype(np.uint8))
    return bytes(out)


@pytest.fixture(scope="module")
def cases(micropython: MicroPython) -> list[list]:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "camera.json"
        r = micropython.run(SCRIPT, str(path))
        assert r.returncode == 0, r.explain()
        return json.loads(path.read_text())


def test_every_format_and_order_was_run(cases: list[list]) -> None:  # type: ignore[type-arg]
    kinds = {(c[1], c[2] & 0xffff, c[2] >> 16) for c in cases}
    for fmt in (RGB565, RGB565_BE, YUYV, NV12, NV21):
        for order in (0, RGB, BGR, GRAY, RGBA):
            for kind in ("from", "resize", "to"):
                assert (kind, fmt, order) in kinds, (kind, fmt, order)


def test_from_pixels_and_resize_equal_numpy(cases: list[list]) -> None:  # type: ignore[type-arg]
    worst_float = 0.0
    for label, kind, t, w, h, size, stride, data, out in cases:
        if kind == "to":
            continue
        fmt, order = t & 0xffff, (t >> 16) or RGB
        rgba, luma = expand(bytes.fromhex(data), fmt, w, h, stride)
        ch = mat_channels(rgba, luma, order)
        got = np.frombuffer(bytes.fromhex(out), "<f4").reshape(ch.shape[0], *(size[::-1] if size else (h, w)))
        if kind == "from":
            want = ch.astype(np.float32)
        else:
            want = resize(ch, *size)
            worst_float = max(worst_float, float(np.abs(got - float_bilinear(ch, *size)).max()))
        assert np.array_equal(got, want), (label, got, want)
    print(f"resize vs float64 bilinear: at most {worst_float:.5f}")
    # each weight is rounded to 1/2048 (off by 1/4096 at most) and moves up to 255 between two
    # pixels: 255/4096 per axis
    assert worst_float <= 2 * 255 / 4096, worst_float


def test_to_pixels_equals_numpy(cases: list[list]) -> None:  # type: ignore[type-arg]
    n = 0
    for label, kind, t, w, h, _, stride, data, out in cases:
        if kind != "to":
            continue
        fmt, order = t & 0xffff, (t >> 16) or RGB
        c = {GRAY: 1, RGBA: 4}.get(order, 3)
        mat = np.frombuffer(bytes.fromhex(data), "<f4").reshape(c, h, w)
        got = bytes.fromhex(out)
        want = frame_out(mat, fmt, order, w, h, stride, got)  # (the gaps: what the buffer held)
        assert got == want, label
        n += 1
    assert n == 5 * 5 * 2


def test_yuv_is_bt601_full_range() -> None:
    """ncnn's fixed point, against the float formula over every Y, U, V: within 2."""
    y, u, v = np.meshgrid(np.arange(256), np.arange(0, 256, 5), np.arange(0, 256, 5), indexing="ij")
    r, g, b = yuv_to_rgb(y, u, v)
    fr = np.clip(y + 1.402 * (v - 128), 0, 255)
    fg = np.clip(y - 0.344136 * (u - 128) - 0.714136 * (v - 128), 0, 255)
    fb = np.clip(y + 1.772 * (u - 128), 0, 255)
    worst = max(float(np.abs(a - f).max()) for a, f in ((r, fr), (g, fg), (b, fb)))
    print(f"YUV -> RGB vs BT.601 full-range floats: at most {worst:.3f}")
    assert worst < 2


RESIZE_VS_WHEEL = """
import ncnn_mp, sys
Mat = ncnn_mp.Mat
frame = open(sys.argv[1], 'rb').read()
t, w, h, tw, th = [int(x) for x in sys.argv[2:7]]
sys.stdout.write(Mat.from_pixels_resize(frame, t, w, h, tw, th).to_bytes().hex())
"""


def run_resize(micropython: MicroPython, frame: bytes, t: int, w: int, h: int, tw: int, th: int) -> np.ndarray:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "frame.bin"
        path.write_bytes(frame)
        out = micropython.check(RESIZE_VS_WHEEL, str(path), *(str(x) for x in (t, w, h, tw, th)))
    return np.frombuffer(bytes.fromhex(out), "<f4")


@pytest.mark.parametrize("tw,th", [(40, 30), (96, 64), (17, 61)])
def test_resize_within_1_of_the_wheel(micropython: MicroPython, tw: int, th: int) -> None:
    """RGB565 (values that unpack exactly) and NV12/YUYV with neutral chroma, against the wheel's
    from_pixels_resize of the same RGB or GRAY pixels."""
    rng = np.random.default_rng(tw * 1000 + th)
    w, h = 64, 48
    rgb5 = rng.integers(0, 32, (h, w, 3))
    rgb5[..., 1] = rng.integers(0, 64, (h, w))
    r, g, b = rgb5[..., 0], rgb5[..., 1], rgb5[..., 2]
    rgb = np.stack([r << 3 | r >> 2, g << 2 | g >> 4, b << 3 | b >> 2], -1).astype(np.uint8)
    v = (r << 11 | g << 5 | b).astype("<u2")
    wheel = np.array(ncnn.Mat.from_pixels_resize(rgb.tobytes(), ncnn.Mat.PixelType.PIXEL_RGB, w, h, tw, th))
    ours = run_resize(micropython, v.tobytes(), RGB565, w, h, tw, th).reshape(3, th, tw)
    worst = float(np.abs(ours - wheel).max())
    gray = rng.integers(0, 256, (h, w)).astype(np.uint8)
    wheel_gray = np.array(ncnn.Mat.from_pixels_resize(gray.tobytes(), ncnn.Mat.PixelType.PIXEL_GRAY, w, h, tw, th))
    nv12 = gray.tobytes() + bytes([128]) * (w * h // 2)
    yuyv = np.stack([gray[:, 0::2], np.full((h, w // 2), 128), gray[:, 1::2], np.full((h, w // 2), 128)], -1)
    for frame, t in ((nv12, NV12 | GRAY << 16), (yuyv.astype(np.uint8).tobytes(), YUYV | GRAY << 16)):
        ours_gray = run_resize(micropython, frame, t, w, h, tw, th).reshape(1, th, tw)
        worst = max(worst, float(np.abs(ours_gray - wheel_gray).max()))
    print(f"resize vs the wheel: at most {worst:.4f}")
    assert worst <= 1, worst


NCNN_YUV = r"""
#include <cstdio>
#include <vector>
#include "mat.h"
int main(int argc, char** argv) {
    int w = 64, h = 48;
    std::vector<unsigned char> yuv(w * h * 3 / 2), rgb(w * h * 3);
    FILE* f = fopen(argv[1], "rb");
    if (fread(yuv.data(), 1, yuv.size(), f) != yuv.size()) return 1;
    fclose(f);
    f = fopen(argv[2], "wb");
    ncnn::yuv420sp2rgb(yuv.data(), w, h, rgb.data());       // NV21
    fwrite(rgb.data(), 1, rgb.size(), f);
    ncnn::yuv420sp2rgb_nv12(yuv.data(), w, h, rgb.data());  // NV12
    fwrite(rgb.data(), 1, rgb.size(), f);
    fclose(f);
    return 0;
}
"""


def test_nv21_and_nv12_equal_ncnns_own(micropython: MicroPython) -> None:
    """ncnn's yuv420sp2rgb and yuv420sp2rgb_nv12 (its C++ API only: built here against the
    Unix firmware's ncnn) give the same bytes as from_pixels(PIXEL_NV21 / NV12) -> RGB."""
    if shutil.which("g++") is None:
        pytest.skip("no g++ to build ncnn's own conversion with")
    prefix = subprocess.run(["python3", "-m", "ci.tool", "ncnn", "--profile", "unix"], cwd=REPO, check=True,
                            capture_output=True, text=True).stdout.strip().splitlines()[-1]
    w, h = 64, 48
    frame = np.random.default_rng(7).integers(0, 256, w * h * 3 // 2).astype(np.uint8).tobytes()
    with tempfile.TemporaryDirectory() as d:
        src, exe, yuv, rgb = Path(d) / "yuv.cpp", Path(d) / "yuv", Path(d) / "f.yuv", Path(d) / "f.rgb"
        src.write_text(NCNN_YUV)
        yuv.write_bytes(frame)
        subprocess.run(["g++", "-O1", "-fopenmp", f"-I{prefix}/include/ncnn", str(src), "-o", str(exe),
                        f"{prefix}/lib/libncnn.a", "-lpthread"], check=True)
        subprocess.run([str(exe), str(yuv), str(rgb)], check=True)
        theirs = np.frombuffer(rgb.read_bytes(), np.uint8).reshape(2, h, w, 3)
    for k, fmt in enumerate((NV21, NV12)):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "frame.bin"
            path.write_bytes(frame)
            out = micropython.check(RESIZE_VS_WHEEL.replace("from_pixels_resize(frame, t, w, h, tw, th)",
                                                            "from_pixels(frame, t, w, h)"),
                                    str(path), str(fmt), str(w), str(h), "0", "0")
        ours = np.frombuffer(bytes.fromhex(out), "<f4").reshape(3, h, w)
        assert np.array_equal(ours, np.moveaxis(theirs[k], -1, 0).astype(np.float32)), fmt


def test_camera_detect_example(micropython: MicroPython, tmp_path: Path) -> None:
    """examples/camera_detect.py on scikit-image's coffee: the cup and the table found in the
    RGB565 frame as in the RGB photo (examples/nanodet_detect.py), within 0.02 in score and 3
    pixels; both byte orders draw the same picture, and the boxes are drawn into it."""
    import skimage.data

    real = shared_models("real", "nanodet_m.param", "nanodet_m.bin")
    rgb = skimage.data.coffee()
    h, w = rgb.shape[:2]
    photo = tmp_path / "coffee.ppm"
    photo.write_bytes(b"P6\n%d %d\n255\n" % (w, h) + rgb.tobytes())
    runs = []
    for order in ("be", "le"):
        png = tmp_path / f"{order}.png"
        r = micropython.run(REPO / "examples" / "camera_detect.py", str(photo), str(real), str(png), order,
                            heapsize="16M")
        assert r.returncode == 0, r.explain()
        runs.append((r.stdout, png.read_bytes()))
    assert runs[0] == runs[1]
    r = micropython.run(REPO / "examples" / "nanodet_detect.py", str(photo), str(real), "320", heapsize="16M")
    assert r.returncode == 0, r.explain()
    frame = [line.split() for line in runs[0][0].splitlines()]
    photo_rows = [line.split() for line in r.stdout.splitlines()]
    assert [row[-2] for row in frame] == ["cup", "table"], frame
    assert len(frame) == len(photo_rows) == 2, (frame, photo_rows)
    for a, b in zip(frame, photo_rows):
        assert abs(float(a[0]) - float(b[0])) <= 0.02, (a, b)
        assert max(abs(float(x) - float(y)) for x, y in zip(a[2:6], b[2:6])) <= 5, (a, b)
    picture = png_pixels(runs[0][1], w, h)
    # (RGB565 keeps the top 5 bits of red and blue)
    changed = np.any(picture[..., [0, 2]] >> 3 != rgb[..., [0, 2]] >> 3, axis=-1)
    box = [int(float(v)) for v in frame[0][2:6]]
    assert changed[box[3] - 1, box[0] + 5:box[2] - 5].mean() > 0.9  # the cup's bottom edge drawn
    assert changed.mean() < 0.05  # and little else


def png_pixels(data: bytes, w: int, h: int) -> np.ndarray:
    """examples/png.py's PNG (8-bit RGB, filter 0 on every row) as an (h, w, 3) array."""
    import zlib

    at, idat = 8, b""
    while at < len(data):
        n = int.from_bytes(data[at:at + 4], "big")
        if data[at + 4:at + 8] == b"IDAT":
            idat += data[at + 8:at + 8 + n]
        at += 12 + n
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + 3 * w)
    assert not raw[:, 0].any()
    return raw[:, 1:].reshape(h, w, 3)

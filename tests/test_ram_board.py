# SPDX-License-Identifier: MIT
"""A detector in an ESP32's RAM (profile qemu-320k: 320 KiB for .data and .bss with a 48 KiB
MicroPython heap, ncnn's heap and a 32 KiB stack; docs/boards.md).

Each detector, with int8 between its layers (quantize_int8 --chain), weights in place in flash,
takes an RGB565 frame of a photo (big-endian, as ESP32 camera drivers give it, in RAM) straight
to its int8 input (Mat.from_pixels_int8), and every blob and workspace comes from an arena laid
out by the plan `make preflight FRAME=` makes on the 4 MiB qemu board (the same code: the plan
holds, no block strays from it). It finds what the desktop finds from the same frame (the
kernels on the memcheck firmware: the same numbers), and what the fp32 model in the wheel finds
from the same pixels:
- RetinaFace mnet.25 on scikit-image's astronaut, a camera framing her head (the photo's
  256x256 around the face, as a 96x96 frame): her face.
- NanoDet-m with int8 outputs (--int8-outputs) on scikit-image's coffee, a camera framing the
  cup and saucer (the photo's 540x360 around them, as a 96x64 frame): the cup (two boxes of it
  at this size, as the fp32 model finds too; on the whole photo at 96x64 int8 moves one box's
  bottom edge by 5 pixels, IoU 0.88 with fp32's).
tests/ram_board.py is the board's side."""

from __future__ import annotations

import tempfile
from pathlib import Path

import ncnn
import numpy as np
import pytest

from ci.firmware import build_firmware, target
from ci.qemu import run_script
from conftest import REPO, MicroPython, QemuBoard, _firmware, _script_env
from ncnn_mp_lib import detection, nanodet
from ncnn_mp_tools.preflight import probe
from ncnn_mp_tools.romfs_pack import pack
from real_models import nanodet_int8_outputs, nanodet_model, retinaface_models
from test_camera import RGB565_BE, expand
from test_mcu_models import (CHAIN_IOU, CHAIN_SCORE, RETINA_OUTPUTS, close_to, faces, objects,
                             wheel_outputs)

SIDE = 96  # RetinaFace's: at 128x128 the arena (144.6 KiB) and the load (115 KiB) need more than 320 KiB
NANODET_SIZE = (96, 64)  # NanoDet's (the crop letterboxed at 96: no padding); at 128x96 its
# stem's 72 KiB convolution output and the 136 KiB load need more (make preflight; docs/models.md)
SCRIPT = REPO / "tests" / "ram_board.py"
CUP = 41


def rgb565_frame(rgb: np.ndarray, w: int, h: int) -> tuple[bytes, np.ndarray]:
    """The photo resized to w x h by ncnn (as the wheel resizes), as an RGB565 frame,
    big-endian, and the 8-bit RGB the frame holds (test_camera.expand: widened as mat_camera.c
    does), (3, h, w) float32."""
    ph, pw = rgb.shape[:2]
    m = ncnn.Mat.from_pixels_resize(np.ascontiguousarray(rgb), ncnn.Mat.PixelType.PIXEL_RGB, pw, ph, w, h)
    px = np.clip(np.array(m), 0, 255).astype(np.int64).transpose(1, 2, 0)  # (h, w, 3)
    frame = ((px[..., 0] >> 3) << 11 | (px[..., 1] >> 2) << 5 | px[..., 2] >> 3).astype(">u2").tobytes()
    rgba, _ = expand(frame, RGB565_BE, w, h, 2 * w)
    return frame, np.ascontiguousarray(np.moveaxis(rgba[..., :3], -1, 0), dtype=np.float32)


def found(output: str, what: str) -> list[list[float]]:
    return [[float(v) for v in line.split()[1:]] for line in output.splitlines() if line.startswith(what + " ")]


def figures(output: str, what: str) -> list[int]:
    (line,) = [x for x in output.splitlines() if x.startswith(what + " ")]
    return [int(v) for v in line.split()[1:]]


def on_the_board(tmp_path: Path, param: Path, weights: Path, frame: bytes, size: tuple[int, int],
                 detector: str, input_name: str, what: str) -> tuple[list[list[float]], list[list[float]]]:
    """The detector's finds (`what` lines) from the frame on the desktop (the memcheck
    firmware's kernels, ncnn's allocator) and on the 320 KiB board (the arena as planned on
    the qemu board); asserts the board's equal the desktop's and its RAM held."""
    w, h = size
    files = {"m.param": param.read_bytes(), "m.bin": weights.read_bytes(), "frame.rgb565": frame}
    # The plan, as make preflight FRAME=rgb565_be makes it on the 4 MiB board of the same code.
    model = {"param": "/rom/m.param", "bin": "/rom/m.bin", "binary_param": False, "outputs": [],
             "inputs": [(input_name, (w, h, 3))], "rom": ("m.param", "m.bin")}
    config = {"opt": {"num_threads": 1}, "copy": False, "models": [model], "frame": "RGB565_BE",
              "arena": 1024 * 1024}
    (measured,) = probe(target("qemu"), config, files, timeout=900)
    assert "failed" not in measured, measured
    files["m.plan"] = bytes.fromhex(measured["plan"])

    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    head = f"CONFIG = {{'model': 'm', 'size': [{w}, {h}], 'detector': '{detector}', "
    desktop = MicroPython(_firmware("memcheck"), _script_env()).check(
        head + f"'plan': None, 'root': '{tmp_path}'}}\n" + SCRIPT.read_text(), timeout=900)
    want = found(desktop, what)
    assert want, f"the desktop finds nothing in the {w}x{h} frame:\n{desktop}"

    board = QemuBoard("qemu-320k")
    with tempfile.TemporaryDirectory() as t:
        image = Path(t) / "romfs.img"
        image.write_bytes(pack(files))
        source = head + "'plan': 'm.plan'}\n" + SCRIPT.read_text()
        r = run_script(board.profile, board.binary, source.encode(), timeout=900, romfs=image)
    assert r.returncode == 0, r.output
    print(r.output)
    got = found(r.output, what)
    close_to(got, want, 0.999, 1e-4, "the 320 KiB board against the desktop")
    arena, peak, unplanned = figures(r.output, "arena")
    assert unplanned == 0 and peak <= arena, r.output
    in_use, high_water, heap = figures(r.output, "c_heap")
    assert high_water <= heap, r.output
    print(f"{what}s {got}; arena {arena:,} B (peak {peak:,}), C heap high-water {high_water:,} of {heap:,} B")
    return got, want


@pytest.mark.mcu
def test_retinaface_from_a_camera_frame_in_320_kib(tmp_path: Path) -> None:
    import skimage.data

    models = retinaface_models(tmp_path)
    frame, widened = rgb565_frame(skimage.data.astronaut()[20:276, 96:352], SIDE, SIDE)
    _, want = on_the_board(tmp_path, *models["int8c"], frame, (SIDE, SIDE), "retinaface", "data", "face")
    # ... and the fp32 model in the wheel, on the pixels the frame holds
    outs = wheel_outputs(*models["fp32"], "data", RETINA_OUTPUTS, widened)
    close_to(want, faces(outs, SIDE), CHAIN_IOU, CHAIN_SCORE, "int8 from the frame against fp32")


@pytest.mark.mcu
def test_nanodet_from_a_camera_frame_in_320_kib(tmp_path: Path) -> None:
    import skimage.data

    fp32 = nanodet_model(tmp_path)
    param, weights = nanodet_int8_outputs(tmp_path, fp32)
    w, h = NANODET_SIZE
    cup = skimage.data.coffee()[0:360, 60:600]
    assert nanodet.letterbox(cup.shape[1], cup.shape[0], w)[:4] == (w, h, 0, 0)  # (the frame is the letterbox)
    frame, widened = rgb565_frame(cup, w, h)
    got, want = on_the_board(tmp_path, param, weights, frame, (w, h), "nanodet", nanodet.INPUT, "object")
    assert got and all(int(o[5]) == CUP for o in got), got
    # ... and the fp32 model in the wheel, on the pixels the frame holds (BGR, normalized)
    bgr = widened[::-1]
    x = ((bgr - np.array(nanodet.MEAN, np.float32)[:, None, None]) * np.array(nanodet.NORM, np.float32)[:, None, None])
    outputs = [name for s in nanodet.STRIDES for name in nanodet.OUTPUTS[s]]
    outs = wheel_outputs(*fp32, nanodet.INPUT, outputs, x.astype(np.float32))
    near(want, fp32_detections(outs, w, nanodet.detect.__defaults__[0] - CHAIN_SCORE), "int8 from the frame against fp32")


def fp32_detections(outs: dict, w: int, threshold: float) -> list[list[float]]:
    """NanoDet's objects from the wheel's outputs, down to `threshold`."""
    by_stride = {s: (w // s, outs[nanodet.OUTPUTS[s][0]].size // nanodet.CLASSES,
                     *(outs[n].reshape(-1).tolist() for n in nanodet.OUTPUTS[s])) for s in nanodet.STRIDES}
    return [[*map(float, o[:5]), o[5]] for o in nanodet.detect(by_stride, threshold)]


def near(got: list[list[float]], fp32: list[list[float]], what: str) -> None:
    """Each of fp32's detections that reaches the threshold plus the tolerance is one of int8's
    (IoU >= CHAIN_IOU, score within CHAIN_SCORE; a score within the tolerance of the threshold
    may fall on either side of it). int8 may find more: at 96x64 the two boxes NanoDet-m puts on
    the cup overlap by IoU 0.50, at the NMS threshold, so which survives turns on their order,
    and int8's probabilities in steps of 1/127 order them otherwise (printed)."""
    top = nanodet.detect.__defaults__[0] + CHAIN_SCORE

    def match(a: list[float], among: list[list[float]]) -> bool:
        return any(a[5] == b[5] and abs(a[0] - b[0]) <= CHAIN_SCORE and detection.box_iou(a[1:5], b[1:5]) >= CHAIN_IOU
                   for b in among)

    print(f"{what}: int8 {got}, fp32 {fp32}")
    assert any(f[0] >= top for f in fp32), (what, fp32)
    assert all(match(f, got) for f in fp32 if f[0] >= top), (what, got, fp32)

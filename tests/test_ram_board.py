"""A detector in an ESP32's RAM (profile qemu-320k: 320 KiB for .data and .bss with a 48 KiB
MicroPython heap, ncnn's heap and a 32 KiB stack; docs/boards.md).

RetinaFace mnet.25 with int8 between its layers (quantize_int8 --chain), weights in place in
flash, takes an RGB565 frame of scikit-image's astronaut (a camera framing her head: the photo's
256x256 around the face, as a 96x96 frame, big-endian as ESP32 camera drivers give it, in RAM)
straight to its int8 input (Mat.from_pixels_int8), and every blob and
workspace comes from an arena laid out by the plan `make preflight FRAME=` makes on the 4 MiB
qemu board (the same code: the plan holds, no block strays from it). It finds the face the
desktop finds from the same frame (the kernels on the memcheck firmware: the same numbers), and
the fp32 model in the wheel finds from the same pixels. tests/ram_board.py is the board's side."""

from __future__ import annotations

import tempfile
from pathlib import Path

import ncnn
import numpy as np
import pytest

from ci.firmware import build_firmware
from ci.qemu import run_script
from conftest import REPO, MicroPython, QemuBoard, _firmware, _script_env
from ncnn_mp_tools.preflight import probe
from ncnn_mp_tools.romfs_pack import pack
from real_models import retinaface_models
from test_camera import RGB565_BE, expand
from test_mcu_models import CHAIN_IOU, CHAIN_SCORE, RETINA_OUTPUTS, close_to, faces, wheel_outputs

SIDE = 96  # what fits: at 128x128 the arena (144.6 KiB) and the load (115 KiB) need more than 320 KiB
SCRIPT = REPO / "tests" / "ram_board.py"


def rgb565_frame(rgb: np.ndarray) -> tuple[bytes, np.ndarray]:
    """The photo resized to SIDE x SIDE by ncnn (as the wheel resizes), as an RGB565 frame,
    big-endian, and the 8-bit RGB the frame holds (test_camera.expand: widened as mat_camera.c does)."""
    h, w = rgb.shape[:2]
    m = ncnn.Mat.from_pixels_resize(np.ascontiguousarray(rgb), ncnn.Mat.PixelType.PIXEL_RGB, w, h, SIDE, SIDE)
    px = np.clip(np.array(m), 0, 255).astype(np.int64).transpose(1, 2, 0)  # (h, w, 3)
    frame = ((px[..., 0] >> 3) << 11 | (px[..., 1] >> 2) << 5 | px[..., 2] >> 3).astype(">u2").tobytes()
    rgba, _ = expand(frame, RGB565_BE, SIDE, SIDE, 2 * SIDE)
    return frame, np.ascontiguousarray(np.moveaxis(rgba[..., :3], -1, 0), dtype=np.float32)


def faces_of(output: str) -> list[list[float]]:
    return [[float(v) for v in line.split()[1:]] for line in output.splitlines() if line.startswith("face ")]


def figures(output: str, what: str) -> list[int]:
    (line,) = [x for x in output.splitlines() if x.startswith(what + " ")]
    return [int(v) for v in line.split()[1:]]


@pytest.mark.mcu
def test_retinaface_from_a_camera_frame_in_320_kib(tmp_path: Path) -> None:
    import skimage.data

    models = retinaface_models(tmp_path)
    param, weights = models["int8c"]
    frame, widened = rgb565_frame(skimage.data.astronaut()[20:276, 96:352])
    files = {"m.param": param.read_bytes(), "m.bin": weights.read_bytes(), "frame.rgb565": frame}
    # The plan, as make preflight FRAME=rgb565_be makes it on the 4 MiB board of the same code.
    model = {"param": "/rom/m.param", "bin": "/rom/m.bin", "binary_param": False, "outputs": [],
             "inputs": [("data", (SIDE, SIDE, 3))], "rom": ("m.param", "m.bin")}
    config = {"opt": {"num_threads": 1}, "copy": False, "models": [model], "frame": "RGB565_BE",
              "arena": 1024 * 1024}
    (measured,) = probe("qemu", build_firmware("qemu"), config, files, timeout=900)
    assert "failed" not in measured, measured
    files["m.plan"] = bytes.fromhex(measured["plan"])

    # The desktop: the same script, ncnn's own allocator, on the desktop firmware with the kernels.
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    desktop = MicroPython(_firmware("memcheck"), _script_env()).check(
        f"CONFIG = {{'plan': None, 'model': 'm', 'size': [{SIDE}, {SIDE}], 'root': '{tmp_path}'}}\n"
        + SCRIPT.read_text(), timeout=900)
    want = faces_of(desktop)
    assert want, f"the desktop finds no face in the astronaut's {SIDE}x{SIDE} frame:\n{desktop}"
    # ... and the fp32 model in the wheel, on the pixels the frame holds
    outs = wheel_outputs(*models["fp32"], "data", RETINA_OUTPUTS, widened)
    close_to(want, faces(outs, SIDE), CHAIN_IOU, CHAIN_SCORE, "int8 from the frame against fp32")

    # The board with an ESP32's RAM.
    board = QemuBoard("qemu-320k")
    with tempfile.TemporaryDirectory() as t:
        image = Path(t) / "romfs.img"
        image.write_bytes(pack(files))
        source = f"CONFIG = {{'plan': 'm.plan', 'model': 'm', 'size': [{SIDE}, {SIDE}]}}\n" + SCRIPT.read_text()
        r = run_script(board.profile, board.binary, source.encode(), timeout=900, romfs=image)
    assert r.returncode == 0, r.output
    print(r.output)
    got = faces_of(r.output)
    close_to(got, want, 0.999, 1e-4, "the 320 KiB board against the desktop")
    size, peak, unplanned = figures(r.output, "arena")
    assert unplanned == 0 and peak <= size, r.output
    in_use, high_water, heap = figures(r.output, "c_heap")
    assert high_water <= heap, r.output
    print(f"faces {got}; arena {size:,} B (peak {peak:,}), C heap high-water {high_water:,} of {heap:,} B")

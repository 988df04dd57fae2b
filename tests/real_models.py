# SPDX-License-Identifier: MIT
"""The real models the MCU tests and `make mcu-report` run, made the same way for both:
RetinaFace mnet.25 widened to fp32 (shipped fp16: widened, its weights can stay in flash)
and quantized to int8, NanoDet-m widened to fp32, MNIST quantized to int8, and their inputs
from photos and digits. "int8c": the same int8 model with int8 between its layers
(quantize_int8.py --chain), which runs on ncnn_mp's kernels (NCNN_MP_KERNELS=1) only."""

from __future__ import annotations

from pathlib import Path

import ncnn
import numpy as np
import numpy.typing as npt

from ncnn_mp_lib import nanodet
from conftest import MNIST_FILES, shared_models
from ncnn_mp_tools import quantize_int8 as qz
from test_oracle import read_pgm

F32 = npt.NDArray[np.float32]
SIZE = 160  # RetinaFace's input on the board: what its 3.4 MiB of C heap holds with room
NANODET_SIDE = 160  # NanoDet's letterbox on the board: 1.4 MiB of blobs at peak (make preflight)


def photo_input(rgb: npt.NDArray[np.uint8], size: int) -> F32:
    """RetinaFace's input: RGB, no normalisation, resized by ncnn as the wheel does."""
    h, w = rgb.shape[:2]
    m = ncnn.Mat.from_pixels_resize(np.ascontiguousarray(rgb), ncnn.Mat.PixelType.PIXEL_RGB, w, h, size, size)
    return np.array(m, dtype=np.float32)


def retinaface_models(folder: Path) -> dict[str, tuple[Path, Path]]:
    """RetinaFace as fp32 (the shipped fp16 weights widened) and int8 (calibrated on other
    photos than the astronaut, the test photo)."""
    import skimage.data

    real = shared_models("real", "mnet.25-opt.param", "mnet.25-opt.bin")
    fp32 = (folder / "fp32.param", folder / "fp32.bin")
    qz.write_model(qz.convert_fp32(qz.read_model(real / "mnet.25-opt.param", real / "mnet.25-opt.bin")), *fp32)
    photos = [skimage.data.chelsea(), skimage.data.coffee(), skimage.data.rocket(),
              np.stack([skimage.data.camera()] * 3, -1)]
    samples = [photo_input(p, SIZE) for p in photos]
    int8 = (folder / "int8.param", folder / "int8.bin")
    qz.quantize_files(*fp32, *int8, samples=samples, input_name="data")
    chain = (folder / "int8c.param", folder / "int8c.bin")
    qz.quantize_files(*fp32, *chain, samples=samples, input_name="data", chain=True)
    return {"fp32": fp32, "int8": int8, "int8c": chain}


def nanodet_model(folder: Path) -> tuple[Path, Path]:
    """NanoDet-m with its fp16 weights widened to fp32 (3.7 MB: they stay in flash)."""
    real = shared_models("real", "nanodet_m.param", "nanodet_m.bin")
    fp32 = (folder / "nanodet.param", folder / "nanodet.bin")
    qz.write_model(qz.convert_fp32(qz.read_model(real / "nanodet_m.param", real / "nanodet_m.bin")), *fp32)
    return fp32


def nanodet_int8(folder: Path, fp32: tuple[Path, Path]) -> dict[str, tuple[Path, Path]]:
    """NanoDet-m in int8 and int8 between layers ("int8c"), calibrated on other photos than
    coffee, the test photo."""
    import skimage.data

    photos = [skimage.data.chelsea(), skimage.data.astronaut(), skimage.data.rocket(),
              np.stack([skimage.data.camera()] * 3, -1)]
    samples = [nanodet_input(p, NANODET_SIDE) for p in photos]
    out = {"int8": (folder / "nanodet8.param", folder / "nanodet8.bin"),
           "int8c": (folder / "nanodet8c.param", folder / "nanodet8c.bin")}
    for name, files in out.items():
        qz.quantize_files(*fp32, *files, samples=samples, input_name=nanodet.INPUT, chain=name == "int8c")
    return out


def nanodet_int8_outputs(folder: Path, fp32: tuple[Path, Path]) -> tuple[Path, Path]:
    """NanoDet-m with int8 between its layers and int8 outputs (quantize_int8 --chain
    --int8-outputs: the heads' Sigmoids write int8 probabilities, the distances stay int8),
    calibrated as nanodet_int8: what a board with little RAM runs."""
    import skimage.data

    photos = [skimage.data.chelsea(), skimage.data.astronaut(), skimage.data.rocket(),
              np.stack([skimage.data.camera()] * 3, -1)]
    samples = [nanodet_input(p, NANODET_SIDE) for p in photos]
    out = (folder / "nanodet8o.param", folder / "nanodet8o.bin")
    qz.quantize_files(*fp32, *out, samples=samples, input_name=nanodet.INPUT, chain=True, int8_outputs=True)
    return out


def nanodet_input(rgb: npt.NDArray[np.uint8], side: int) -> F32:
    """NanoDet's input as examples/nanodet_detect.py makes it: letterboxed to `side`, padded
    to multiples of 32, BGR, normalised."""
    h, w = rgb.shape[:2]
    rw, rh, px, py, _ = nanodet.letterbox(w, h, side)
    m = ncnn.Mat.from_pixels_resize(np.ascontiguousarray(rgb), ncnn.Mat.PixelType.PIXEL_RGB2BGR, w, h, rw, rh)
    pw, ph = (rw + 31) // 32 * 32 - rw, (rh + 31) // 32 * 32 - rh
    m = ncnn.copy_make_border(m, py, ph - py, px, pw - px, ncnn.BorderType.BORDER_CONSTANT, 0.0)
    m.substract_mean_normalize(nanodet.MEAN, nanodet.NORM)
    return np.array(m, dtype=np.float32)


def mnist_digits() -> list[F32]:
    mnist = shared_models("mnist", *MNIST_FILES)
    return [read_pgm(mnist / f"{d}.pgm").astype(np.float32).reshape(1, 28, 28) / 255 for d in range(10)]


def mnist_int8(folder: Path, chain: bool = False) -> tuple[Path, Path]:
    """MNIST in int8 (chain: int8 between layers), calibrated on noisy copies of the ten digits."""
    mnist = shared_models("mnist", *MNIST_FILES)
    stem = "int8c" if chain else "int8"
    int8 = (folder / f"{stem}.param", folder / f"{stem}.bin")
    rng = np.random.default_rng(1)
    calib = [np.clip(d + rng.normal(0, 0.05, d.shape), 0, 1).astype(np.float32) for d in mnist_digits() for _ in range(5)]
    qz.quantize_files(mnist / "mnist.param", mnist / "mnist.bin", *int8, samples=calib, input_name="data", chain=chain)
    return int8

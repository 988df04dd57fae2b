# SPDX-License-Identifier: MIT
"""From ONNX to the boards (`make model`, ncnn_mp_tools/convert.py), as a user with an ONNX model
and a few images goes: a small CNN built here with the `onnx` package (convolutions, a depthwise
one, pooling, a residual add, a fully connected head), converted by pnnx, checked against
onnxruntime, quantized, packed, and run on the Cortex-M3 and the RISC-V boards with the
weights in place. What each step may differ by:
- fp32, the wheel and each board against onnxruntime: 1e-4 of the output's largest |value|
  (seen: 3.7e-7 in the wheel, 3.6e-7 on the boards: the precision they print);
- int8 (int8 between layers), on the desktop firmware with ncnn_mp's kernels (the wheel's x86
  layers cannot run int8 between layers), against fp32: 6% of the largest |value|, and the
  top-1 class the same for every input (seen: 2.3%);
- int8 on a board against the desktop kernels: 1% (the same integer arithmetic; a float layer
  between may round one int8 step otherwise; seen: equal to the 6 digits printed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ci.firmware import build_firmware
from conftest import REPO, tool

FP32_TOL = 1e-4
INT8_TOL = 0.06
BOARD_INT8_TOL = 0.01


def make_onnx(path: Path, seed: int = 0) -> None:
    """A 32x32 RGB classifier with 10 outputs and He-initialised random weights."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)

    def w(name: str, *shape: int, scale: float | None = None) -> onnx.TensorProto:
        fan = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        values = rng.standard_normal(shape) * (scale or (2.0 / fan) ** 0.5)
        return numpy_helper.from_array(values.astype(np.float32), name)

    weights = [w("c1w", 8, 3, 3, 3), w("c1b", 8, scale=0.1), w("dww", 8, 1, 3, 3), w("dwb", 8, scale=0.1),
               w("pww", 16, 8, 1, 1), w("pwb", 16, scale=0.1), w("c3w", 16, 16, 3, 3), w("c3b", 16, scale=0.1),
               w("fcw", 10, 16), w("fcb", 10, scale=0.1)]
    node = helper.make_node
    nodes = [
        node("Conv", ["x", "c1w", "c1b"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        node("Relu", ["c1"], ["r1"]),
        node("Conv", ["r1", "dww", "dwb"], ["dw"], pads=[1, 1, 1, 1], group=8),  # depthwise
        node("Relu", ["dw"], ["r2"]),
        node("Conv", ["r2", "pww", "pwb"], ["pw"]),  # pointwise
        node("Relu", ["pw"], ["r3"]),
        node("MaxPool", ["r3"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        node("Conv", ["p1", "c3w", "c3b"], ["c3"], pads=[1, 1, 1, 1]),
        node("Add", ["c3", "p1"], ["res"]),  # the residual
        node("Relu", ["res"], ["r4"]),
        node("GlobalAveragePool", ["r4"], ["gap"]),
        node("Flatten", ["gap"], ["flat"]),
        node("Gemm", ["flat", "fcw", "fcb"], ["y"], transB=1),  # the fully connected head
    ]
    graph = helper.make_graph(nodes, "small_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def photo_crops(folder: Path, per_photo: int = 2) -> Path:
    """Crops of scikit-image's photos as PNG files: the user's few calibration images."""
    import skimage.data
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    for name in ("astronaut", "coffee", "chelsea", "rocket"):
        rgb = getattr(skimage.data, name)()
        for k in range(per_photo):
            y, x = (int(rng.integers(0, n - 128)) for n in rgb.shape[:2])
            Image.fromarray(rgb[y:y + 128, x:x + 128]).save(folder / f"{name}{k}.png")
    return folder


def relative(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.abs(got - want).max() / np.abs(want).max())


def board_outputs(stdout: str) -> dict[str, np.ndarray]:
    """run_board.py's lines `MODEL OUTPUT v v v ...` by model name."""
    found = {}
    for line in stdout.splitlines():
        f = line.split()
        if len(f) > 2 and f[1] == "out0":
            found[f[0]] = np.array([float(v) for v in f[2:]], dtype=np.float32)
    return found


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    """`make model PROFILE=qemu MODEL=small_cnn.onnx IMAGES=photos/`, once for the module."""
    root = tmp_path_factory.mktemp("onnx")
    make_onnx(root / "small_cnn.onnx")
    photos = photo_crops(root / "photos")
    out = root / "out"
    r = tool("model", "--profile", "qemu", str(root / "small_cnn.onnx"), "--images", str(photos), "--out", str(out),
             timeout=1800)
    return root, out, r


@pytest.mark.mcu
def test_onnx_to_board_files(converted: tuple[Path, Path, subprocess.CompletedProcess[str]]) -> None:
    """The conversion writes the ncnn files, int8 files, ROMFS, run script and report, and its fp32
    model computes what onnxruntime does; its int8 one what the fp32 one does, within INT8_TOL."""
    import onnxruntime as ort

    from ncnn_mp_tools.convert import Model, kernels_outputs, wheel_outputs

    root, out, r = converted
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert sorted(p.name for p in out.iterdir()) == [
        "input.f32", "inputs.npy", "report.json", "romfs.img", "run_board.py",
        "small_cnn-int8.bin", "small_cnn-int8.param", "small_cnn.bin", "small_cnn.param"]
    run_line = json.loads((out / "report.json").read_text())["run"]
    assert run_line.startswith(f'make run PROFILE=qemu MODELS="{out / "small_cnn-int8.param"} '), run_line
    param = (out / "small_cnn.param").read_text()
    for layer in ("Convolution", "ConvolutionDepthWise", "Pooling", "BinaryOp", "InnerProduct"):
        assert f"\n{layer} " in param, param
    assert "8=102" in (out / "small_cnn-int8.param").read_text()  # (a convolution with int8 output: the chain)
    inputs = np.load(out / "inputs.npy")
    assert inputs.shape == (8, 3, 32, 32) and 0.0 <= inputs.min() and inputs.max() <= 1.0

    session = ort.InferenceSession(str(root / "small_cnn.onnx"), providers=["CPUExecutionProvider"])

    desktop = kernels_outputs(Model(out / "small_cnn-int8.param", out / "small_cnn-int8.bin", "in0", (3, 32, 32),
                                    ["out0"]), inputs, build_firmware("memcheck"))
    for x, (int8,) in zip(inputs, desktop):
        ref = session.run(None, {"x": x[None]})[0].reshape(-1)
        (fp32,) = wheel_outputs(Model(out / "small_cnn.param", out / "small_cnn.bin", "in0", (3, 32, 32), ["out0"]), x)
        assert relative(fp32, ref) <= FP32_TOL, (fp32, ref)
        assert relative(int8.reshape(-1), fp32) <= INT8_TOL, (int8, fp32)
        assert int(np.argmax(int8)) == int(np.argmax(ref))
    report = json.loads((out / "report.json").read_text())
    assert report["wheel_vs_onnxruntime"]["relative"] <= FP32_TOL, report
    assert report["int8_vs_fp32"]["relative"] <= INT8_TOL and report["int8_vs_fp32"]["top1_agree"] == 1.0, report
    assert report["preflight_ok"], r.stdout[-4000:]
    # The preflight ran on the board's firmware sized to the models, weights in place there.
    assert "measured on the 'qemu' firmware sized to the models" in r.stdout, r.stdout[-4000:]
    assert r.stdout.count("copied 0.0 KiB, converted to fp32 0.0 KiB") == 4, r.stdout[-4000:]


@pytest.mark.mcu
@pytest.mark.parametrize("board", ["qemu", "rv32"])
def test_onnx_model_runs_on_board(converted: tuple[Path, Path, subprocess.CompletedProcess[str]], board: str) -> None:
    """run_board.py on each board's firmware sized to the models, with the conversion's ROMFS:
    fp32 as onnxruntime computes, int8 as the desktop's kernels, the weights read in place."""
    import onnxruntime as ort

    from ncnn_mp_tools.convert import Model, kernels_outputs

    root, out, r = converted
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    models = f"{out / 'small_cnn-int8.param'} {out / 'small_cnn.param'}"
    run = tool("run", "--profile", board, "--models", models, "--romfs", str(out / "romfs.img"),
               str(out / "run_board.py"))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    got = board_outputs(run.stdout)
    assert set(got) == {"small_cnn", "small_cnn-int8"}, run.stdout
    for model, size in (("small_cnn", (out / "small_cnn.bin").stat().st_size),
                        ("small_cnn-int8", (out / "small_cnn-int8.bin").stat().st_size)):
        weights = next(line for line in run.stdout.splitlines() if line.startswith(f"{model} weights:"))
        info = eval(weights.split(":", 1)[1])  # (a dict the firmware printed)
        assert info["copied"] == 0 and info["converted"] == 0 and size - 64 <= info["in_place"] <= size, weights

    x = np.load(out / "inputs.npy")[0]
    ref = ort.InferenceSession(str(root / "small_cnn.onnx"), providers=["CPUExecutionProvider"]) \
        .run(None, {"x": x[None]})[0].reshape(-1)
    assert relative(got["small_cnn"], ref) <= FP32_TOL, (got["small_cnn"], ref)
    (desktop,), = kernels_outputs(Model(out / "small_cnn-int8.param", out / "small_cnn-int8.bin", "in0", (3, 32, 32),
                                        ["out0"]), x[None], build_firmware("memcheck"))
    assert relative(got["small_cnn-int8"], desktop.reshape(-1)) <= BOARD_INT8_TOL, (got["small_cnn-int8"], desktop)


@pytest.mark.mcu
def test_run_with_a_folder_as_romfs(converted: tuple[Path, Path, subprocess.CompletedProcess[str]],
                                    tmp_path: Path) -> None:
    """`make run ROMFS=folder`: the folder packed as the board's flash (its subfolders too), the
    same outputs as from the conversion's own image; an empty folder is refused."""
    root, out, r = converted
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    folder = tmp_path / "rom"
    (folder / "notes").mkdir(parents=True)
    for name in ("small_cnn.param", "small_cnn.bin", "small_cnn-int8.param", "small_cnn-int8.bin", "input.f32"):
        (folder / name).write_bytes((out / name).read_bytes())
    (folder / "notes" / "where.txt").write_text("in a subfolder\n")
    script = tmp_path / "run.py"
    script.write_text((out / "run_board.py").read_text() + 'print(open("/rom/notes/where.txt").read().strip())\n')
    models = ["--models", f"{out / 'small_cnn-int8.param'} {out / 'small_cnn.param'}"]
    from_folder = tool("run", "--profile", "qemu", *models, "--romfs", str(folder), str(script))
    assert from_folder.returncode == 0, from_folder.stdout[-3000:] + from_folder.stderr[-3000:]
    from_image = tool("run", "--profile", "qemu", *models, "--romfs", str(out / "romfs.img"), str(out / "run_board.py"))
    got, want = ({k: v.tolist() for k, v in board_outputs(run.stdout).items()} for run in (from_folder, from_image))
    assert got == want and set(got) == {"small_cnn", "small_cnn-int8"}, from_folder.stdout
    assert from_folder.stdout.strip().endswith("in a subfolder"), from_folder.stdout
    (tmp_path / "empty").mkdir()
    empty = tool("run", "--profile", "qemu", *models, "--romfs", str(tmp_path / "empty"), str(script))
    assert empty.returncode == 1 and "the ROMFS folder" in empty.stderr and "holds no files" in empty.stderr


@pytest.mark.mcu
def test_compare_on_a_firmware_sized_to_the_model(
        converted: tuple[Path, Path, subprocess.CompletedProcess[str]]) -> None:
    """`make compare PROFILE=rv32 SIZED=1`: every blob of the converted fp32 model on the RISC-V
    firmware sized to it, against the wheel."""
    root, out, r = converted
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    np.save(root / "x0.npy", np.load(out / "inputs.npy")[0])
    c = tool("compare", "--profile", "rv32", str(out / "small_cnn.param"), "in0=32x32x3", "--sized",
             "--input", str(root / "x0.npy"))
    assert c.returncode == 0, c.stdout[-4000:] + c.stderr[-3000:]
    assert "on the 'rv32' firmware sized to the models" in c.stdout, c.stdout
    assert "no drift: all 12 blobs within 0.001" in c.stdout, c.stdout


@pytest.mark.mcu
def test_ncnn_model_to_board(tmp_path: Path) -> None:
    """`make model` from ncnn's own files (MNIST, SHAPE given) and grey images (its ten digits):
    no ONNX step, int8 agreeing with fp32 on every digit, the preflight on the sized firmware."""
    from conftest import MNIST_FILES, shared_models

    mnist = shared_models("mnist", *MNIST_FILES)
    out = tmp_path / "out"
    r = tool("model", "--profile", "qemu", str(mnist / "mnist.param"), "--shape", "1,1,28,28", "--images", str(mnist),
             "--out", str(out), timeout=1800)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert "1. taking mnist.param (weights as fp32)" in r.stdout and "onnxruntime" not in r.stdout, r.stdout
    assert "10 inputs from" in r.stdout and "(gray, mean [0.0], norm [0.00392156862745098])" in r.stdout, r.stdout
    report = json.loads((out / "report.json").read_text())
    assert "wheel_vs_onnxruntime" not in report and report["preflight_ok"], report
    assert report["int8_vs_fp32"]["top1_agree"] == 1.0 and report["int8_vs_fp32"]["relative"] <= INT8_TOL, report
    inputs = np.load(out / "inputs.npy")
    from PIL import Image

    with Image.open(mnist / "3.pgm") as im:  # (28 x 28 already: the resize keeps it as it is)
        assert np.allclose(inputs[3, 0], np.asarray(im, dtype=np.float32) / 255, rtol=0, atol=1e-6)


def test_onnx_weights_kept_beside_the_model(tmp_path: Path) -> None:
    """An ONNX model whose weights are in a file beside it (ONNX's external data, what exporters
    write past 2 GiB or when asked) converts to the same ncnn files as the one-file model (pnnx's
    executable alone reads such weights as zeros)."""
    import onnx

    from ncnn_mp_tools.convert import external_data, from_onnx

    make_onnx(tmp_path / "one.onnx")
    (tmp_path / "split").mkdir()
    onnx.save_model(onnx.load(str(tmp_path / "one.onnx")), str(tmp_path / "split" / "net.onnx"),
                    save_as_external_data=True, location="net.weights", size_threshold=0)
    assert external_data(tmp_path / "split" / "net.onnx") == {"net.weights"}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = from_onnx(tmp_path / "one.onnx", (3, 32, 32), tmp_path / "a", "net")
    split = from_onnx(tmp_path / "split" / "net.onnx", (3, 32, 32), tmp_path / "b", "net")
    assert [p.read_bytes() for p in one] == [p.read_bytes() for p in split]
    assert sorted(p.name for p in (tmp_path / "split").iterdir()) == ["net.onnx", "net.weights"]  # (nothing added)


def test_calibration_images_resized_as_the_board_resizes() -> None:
    """The images become inputs as Mat.from_pixels_resize makes them (the wheel's, 8 bits): within
    1, shrinking (no smoothing) and growing, RGB and grey."""
    import ncnn

    from ncnn_mp_tools.convert import resize_bilinear

    rng = np.random.default_rng(0)
    for h, w, oh, ow in [(128, 128, 32, 32), (100, 75, 32, 40), (20, 30, 64, 48), (512, 384, 28, 28)]:
        rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        want = np.array(ncnn.Mat.from_pixels_resize(rgb, ncnn.Mat.PixelType.PIXEL_RGB, w, h, ow, oh))
        assert np.abs(resize_bilinear(rgb.astype(np.float32), ow, oh) - want.transpose(1, 2, 0)).max() <= 1.0
        grey = np.ascontiguousarray(rgb[..., 0])
        want = np.array(ncnn.Mat.from_pixels_resize(grey, ncnn.Mat.PixelType.PIXEL_GRAY, w, h, ow, oh))
        assert np.abs(resize_bilinear(grey.astype(np.float32), ow, oh) - want[0]).max() <= 1.0


def test_model_refuses_mistakes(tmp_path: Path) -> None:
    """Each mistake stops the command before any work, with one line naming it."""
    make_onnx(tmp_path / "m.onnx")
    (tmp_path / "images").mkdir()
    (tmp_path / "not.onnx").write_bytes(b"\x00not a model")
    cases = [
        (["--profile", "unix", "m.onnx", "--images", "images"], "the 'unix' firmware is not one"),
        (["--profile", "qemu", "missing.onnx", "--images", "images"], "MODEL=missing.onnx does not exist"),
        (["--profile", "qemu", "not.onnx", "--images", "images"], "not.onnx is not an ONNX model"),
        (["--profile", "qemu", "m.onnx", "--images", "images", "--shape", "3,32"], "SHAPE=3,32 is not"),
        (["--profile", "qemu", "m.onnx", "--images", "images", "--shape", "1,3,h,w"], "SHAPE=1,3,h,w is not"),
        (["--profile", "qemu", "m.onnx", "--images", "images"], "images has no images"),
        (["--profile", "qemu", "m.onnx", "--images", "nowhere"], "IMAGES="),
        (["--profile", "qemu", "m.onnx", "--images", "images", "--mean", "1,2"], "MEAN has 2 values for 3 channels"),
        (["--profile", "qemu", "m.onnx", "--images", "images", "--norm", "1/x"], "NORM=1/x is not a list of numbers"),
    ]
    for args, message in cases:
        p = subprocess.run([sys.executable, "-m", "ci.device_tools", "model", *args, "--out", str(tmp_path / "out")],
                           capture_output=True, text=True, cwd=tmp_path, timeout=300,
                           env=dict(os.environ, PYTHONPATH=str(REPO)))
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert p.stderr.startswith("ncnn_mp model: ") and message in p.stderr, (args, p.stderr)

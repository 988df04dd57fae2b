# SPDX-License-Identifier: MIT
"""`make preflight` and firmwares sized to models (MODELS=...): the layer list derived from
ncnn's source (ncnn_mp_tools/layers.py) must be enough to run the models, and the preflight must say
what a profile lacks and what a model costs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import MNIST_FILES, REPO, shared_models, tool


def test_layers_of_binary_and_text_params(digits_dir: Path) -> None:
    from ncnn_mp_tools.layers import model_layer_types, model_layers, required

    text = model_layer_types(digits_dir / "digits.param")
    binary = model_layer_types(digits_dir / "digits.param.bin")
    assert text == ["Input", "Standardize", "InnerProduct", "ReLU", "Softmax"]
    assert binary == ["Input", "custom #0", "InnerProduct", "ReLU", "Softmax"]
    need = required(model_layers(digits_dir / "digits.param"), "xtensa")
    # What the model names and what the Net always runs; nothing else with ncnn's generic
    # layers, where ARM's InnerProduct would make a Flatten too.
    assert set(need) == {"Input", "InnerProduct", "ReLU", "Softmax", "Packing", "Cast"}, need
    assert required(model_layers(digits_dir / "digits.param"), "arm")["Flatten"] == "InnerProduct creates it"
    # A fused activation and the int8 conversions count only where the params ask for them.
    conv = [("Convolution", {0: "8", 9: "0"})]
    assert {"ReLU", "Quantize"}.isdisjoint(required(conv, "xtensa"))
    switched = required([("Convolution", {0: "8", 8: "2", 9: "1"})], "xtensa")
    assert {"ReLU", "Quantize"} <= set(switched), switched  # (generic int8 convolution dequantizes inline)


@pytest.mark.mcu
def test_preflight_on_a_profile_that_lacks_layers(tmp_path: Path) -> None:
    """qemu-nostring keeps the digits model's layers only: MNIST's Convolution and Pooling are
    missing, so the preflight measures on that firmware sized to MNIST instead of stopping. Its
    ncnn reads binary params only: the text one is refused with the command that converts it."""
    mnist = shared_models("mnist", *MNIST_FILES)
    text = tool("preflight", "--profile", "qemu-nostring", str(mnist / "mnist.param"))
    assert text.returncode == 2, text.stdout + text.stderr
    assert ("the 'qemu-nostring' firmware has ncnn without NCNN_STRING: it cannot read the text param "
            f"{(mnist / 'mnist.param').resolve()}: give its binary form: python3 -m ncnn_mp_tools.param_to_bin") \
        in text.stderr  # (the tools name models by their resolved paths)
    binary = tmp_path / "mnist.param.bin"
    subprocess.run([sys.executable, "-m", "ncnn_mp_tools.param_to_bin", str(mnist / "mnist.param"), str(binary)],
                   check=True, capture_output=True, cwd=REPO)
    small = tool("preflight", "--profile", "qemu-nostring", str(binary), str(mnist / "mnist.bin"))
    assert small.returncode == 0, small.stdout + small.stderr
    out = small.stdout
    assert "the 'qemu-nostring' firmware LACKS: Convolution, Pooling" in out, out
    assert (f"measured on the 'qemu-nostring' firmware sized to the models (make firmware PROFILE=qemu-nostring "
            f"MODELS=\"{binary.resolve()}\") under QEMU") in out, out
    assert re.search(r"m0\.param: weights in place 23\.4 KiB, copied 0\.0 KiB", out), out
    assert out.count("outputs: ") == 2 and " instructions for the extract" in out, out


@pytest.mark.mcu
def test_preflight_on_the_board_profiles() -> None:
    mnist = shared_models("mnist", *MNIST_FILES)
    for board in ("qemu", "rv32", "esp32core"):  # the Cortex-M3, RISC-V and the ESP32's core
        full = tool("preflight", "--profile", board, str(mnist / "mnist.param"))
        assert full.returncode == 0, full.stdout + full.stderr
        out = full.stdout
        assert "layers it uses (4): Input, Convolution, Pooling, InnerProduct" in out, out
        assert f"the '{board}' firmware keeps every layer it needs" in out, out
        # Measured twice (Unix, then the board), the weights in place both times and, on the
        # board's generic layers, no byte of them in RAM: what the load leaves in use is the
        # shape guard's wrappers of its five guarded layers (2 Convolution, 2 Pooling, an
        # InnerProduct), far below the 23.4 KiB a copy would take.
        assert out.count("mnist.param: weights in place 23.4 KiB, copied 0.0 KiB, converted to fp32 0.0 KiB") == 1, out
        board_load = re.search(r"m0\.param: weights in place 23\.4 KiB, copied 0\.0 KiB, converted to fp32 0\.0 KiB; "
                               r"RAM the load left in use ([0-9.]+) KiB", out)
        assert board_load and float(board_load.group(1)) < 2.0, out
        assert f"measured on the '{board}' firmware under QEMU" in out, out
        assert out.count("outputs: fc 10x1x1") == 2, out
        assert " instructions for the extract" in out, out


@pytest.mark.mcu
def test_firmware_sized_to_models(digits_dir: Path, tmp_path: Path) -> None:
    """A firmware built with MODELS=mnist.param digits.param mnist-int8.param keeps only what
    those need (far fewer layers than the hand-kept list) and runs the models as the full one
    does: the MNIST and digits test scripts, and the int8 MNIST against the wheel."""
    from test_mcu_models import mnist_int8_files, run_mnist_int8

    mnist = shared_models("mnist", *MNIST_FILES)
    int8_files, want = mnist_int8_files(tmp_path)
    (tmp_path / "int8.param").write_bytes(int8_files["int8.param"])
    models = f"{mnist / 'mnist.param'} {digits_dir / 'digits.param'} {tmp_path / 'int8.param'}"
    built = tool("firmware", "--profile", "qemu", "--models", models)
    assert built.returncode == 0, built.stderr[-3000:]
    firmware = Path(built.stdout.strip().splitlines()[-1])
    options = tool("ncnn-options", "--profile", "qemu", "--models", models).stdout
    kept = sorted(o.split("=")[0][len("-DWITH_LAYER_"):] for o in options.split()
                  if o.startswith("-DWITH_LAYER_") and o.endswith("=ON"))
    assert kept == ["cast", "convolution", "flatten", "innerproduct", "input", "packing", "padding", "pooling",
                    "quantize", "relu", "softmax"], kept
    from conftest import MP_TESTS, QemuBoard

    board = QemuBoard("qemu")
    board.binary = firmware
    for script in ("ncnn_mp_mnist.py", "ncnn_mp_param_bin.py"):
        r = board.run(MP_TESTS / script)
        assert r.returncode == 0, r.explain()
        assert r.stdout == (MP_TESTS / f"{script}.exp").read_text(), r.explain()
    run_mnist_int8(board, int8_files, want)


@pytest.mark.mcu
def test_preflight_from_a_camera_frame_in_an_arena(tmp_path: Path) -> None:
    """FRAME=gray: MNIST with int8 from its first layer (quantize_int8 --chain) fed from a camera
    frame straight to int8, then run in a first-fit arena, which writes its plan, then in an
    arena of that plan on a fresh board: no larger, every block as planned, and the RAM budget.
    A FRAME that is no format, or that makes another channel count than the input's, is refused
    up front."""
    from real_models import mnist_int8

    param, weights = mnist_int8(tmp_path, chain=True)
    r = tool("preflight", "--profile", "qemu", str(param), str(weights), "--frame", "gray")
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert re.search(r"inputs from a camera frame: data int8, scale [0-9.]+ \(Mat\.from_pixels_int8\)", out), out
    fit, planned = (float(v) for v in re.findall(
        r"the extract in an arena: ([0-9.]+) KiB first fit, ([0-9.]+) KiB as planned \(0 blocks off the plan\)", out)[-1])
    assert planned <= fit, out
    plan = REPO / "build" / "plans" / "qemu" / (param.stem + ".plan")
    assert plan.exists() and plan.read_bytes()[:4] == b"NMPA", out
    assert "RAM budget: weights copied" in out and re.search(r"instructions for the extract, [0-9,]+ for the frame's conversion", out), out
    bad = tool("preflight", "--profile", "qemu", str(param), str(weights), "--frame", "bayer")
    assert bad.returncode == 2 and "FRAME=bayer is not a camera frame format" in bad.stderr, bad.stderr
    rgb = tool("preflight", "--profile", "qemu", str(param), str(weights), "--frame", "rgb565")
    assert rgb.returncode == 2 and "a rgb565 frame makes 3 channels" in rgb.stderr, rgb.stderr

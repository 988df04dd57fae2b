# SPDX-License-Identifier: MIT
"""`make compare` (ncnn_mp_tools/compare.py): a model on the firmware and in the CPython wheel, every
blob compared. Real models match on the Unix firmware and on the Cortex-M3 board; a model
altered on the device side only is reported at the layer that was altered, exit status 1."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import MNIST_FILES, REPO, MicroPython, QemuBoard, shared_models

SQUEEZENET = ("squeezenet_v1.1.param", "squeezenet_v1.1.bin")


def compare(firmware: Path, profile: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ci.device_tools", "compare", "--profile", profile,
                           "--firmware", str(firmware), *args], capture_output=True, text=True, timeout=timeout, cwd=REPO)


def rows(out: str) -> dict[str, list[str]]:
    """The table's rows by blob name: [layer, type, blob, shape, max|wheel|, max abs diff, drift(, <)]."""
    found = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 7 and not line.startswith(("[", "input", "layer ")):
            found[f[2]] = f
    return found


def test_mnist_matches(micropython: MicroPython) -> None:
    mnist = shared_models("mnist", *MNIST_FILES)
    r = compare(micropython.binary, "unix", str(mnist / "mnist.param"), str(mnist / "mnist.bin"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no drift: all 6 blobs within 0.001" in r.stdout, r.stdout
    table = rows(r.stdout)
    assert list(table) == ["data", "conv0", "pool0", "conv1", "pool1", "fc"], r.stdout
    assert table["data"][5] == "0" and table["conv1"][3] == "14x14x16" and table["fc"][3] == "10", r.stdout
    assert all(float(row[6]) <= 1e-3 for row in table.values()), r.stdout


def test_squeezenet_matches(micropython: MicroPython) -> None:
    real = shared_models("real", *SQUEEZENET)
    r = compare(micropython.binary, "unix", str(real / SQUEEZENET[0]), "data=227x227x3")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no drift: all 56 blobs within 0.001" in r.stdout, r.stdout
    assert rows(r.stdout)["prob"][3] == "1000", r.stdout


def test_altered_weight_is_found_at_its_layer(micropython: MicroPython, tmp_path: Path) -> None:
    """One weight of MNIST's conv1 changed in the device's copy of the .bin: conv0 and pool0
    match, conv1 is the first drift, its input's drift is 0."""
    mnist = shared_models("mnist", *MNIST_FILES)
    data = bytearray((mnist / "mnist.bin").read_bytes())
    # conv0: a 4-byte storage tag, 200 fp32 weights, 8 biases; then conv1's tag and weights.
    at = 4 + 200 * 4 + 8 * 4 + 4 + 17 * 4
    (w,) = struct.unpack_from("<f", data, at)
    struct.pack_into("<f", data, at, w + 0.5)
    (tmp_path / "bad.bin").write_bytes(data)
    (tmp_path / "bad.param").write_bytes((mnist / "mnist.param").read_bytes())
    args = (str(mnist / "mnist.param"), str(mnist / "mnist.bin"),
            "--device-model", str(tmp_path / "bad.param"), str(tmp_path / "bad.bin"))
    r = compare(micropython.binary, "unix", *args)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "first drift: layer conv1 (Convolution), output blob conv1: " in r.stdout, r.stdout
    assert "  its input pool0: drift 0.00e+00 (max abs diff 0) within tolerance" in r.stdout, r.stdout
    table = rows(r.stdout)
    assert table["conv1"][-1] == "<" and [b for b, row in table.items() if row[-1] == "<"] == ["conv1"], r.stdout
    assert float(table["conv0"][6]) == 0 and float(table["conv1"][6]) > 1e-3, r.stdout
    loose = compare(micropython.binary, "unix", *args, "--tol", "10")  # (the tolerance is the user's)
    assert loose.returncode == 0 and "no drift: all 6 blobs within 10" in loose.stdout, loose.stdout + loose.stderr


def test_altered_param_is_found_at_its_layer(micropython: MicroPython, tmp_path: Path) -> None:
    """SqueezeNet with fire5/expand1x1's fused ReLU switched off on the device only (9=1 -> 9=0):
    the first drift is that layer, not the Concat after it; exit status 1."""
    real = shared_models("real", *SQUEEZENET)
    lines = (real / SQUEEZENET[0]).read_text().split("\n")
    (n,) = [i for i, line in enumerate(lines) if line.split()[1:2] == ["fire5/expand1x1"]]
    assert " 9=1" in lines[n]
    lines[n] = lines[n].replace(" 9=1", " 9=0")
    (tmp_path / "altered.param").write_text("\n".join(lines))
    (tmp_path / "altered.bin").symlink_to(real / SQUEEZENET[1])
    args = (str(real / SQUEEZENET[0]), "data=227x227x3", "--device-model", str(tmp_path / "altered.param"))
    r = compare(micropython.binary, "unix", *args)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "first drift: layer fire5/expand1x1 (Convolution), output blob fire5/expand1x1_fire5/relu_expand1x1: " \
        in r.stdout, r.stdout
    assert "worst element [" in r.stdout and "its input fire5/squeeze1x1_fire5/relu_squeeze1x1_splitncnn_1: drift" \
        in r.stdout, r.stdout


@pytest.mark.mcu
@pytest.mark.parametrize("profile", ["qemu", "esp32core"])
def test_retinaface_matches_on_the_board(tmp_path: Path, profile: str) -> None:
    """RetinaFace fp32 (weights in place in the board's ROMFS) at 64x64 on the Cortex-M3 board (soft
    float) and on the ESP32's core (its FPU, the fp32 block in assembly): every one of its 109 blobs
    within 1e-3 of the wheel's (about 12 s each)."""
    from ncnn_mp_tools import quantize_int8 as qz

    real = shared_models("real", "mnet.25-opt.param", "mnet.25-opt.bin")
    fp32 = (tmp_path / "fp32.param", tmp_path / "fp32.bin")
    qz.write_model(qz.convert_fp32(qz.read_model(real / "mnet.25-opt.param", real / "mnet.25-opt.bin")), *fp32)
    board = QemuBoard(profile)
    r = compare(board.binary, profile, str(fp32[0]), str(fp32[1]), "data=64x64x3", "--limit", "0", timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no drift: all 109 blobs within 0.001" in r.stdout, r.stdout
    table = rows(r.stdout)
    # 64 / 32 = 2 a side; 2 anchors, each with a background and a face score
    assert table["face_rpn_cls_prob_reshape_stride32"][3] == "2x2x4", r.stdout

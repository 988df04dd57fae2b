"""ncnn_mp gives the same numbers as an independent implementation: the CPython `ncnn` wheel
(same ncnn release, same model, same input) or scikit-learn, which trained the digits model."""

from __future__ import annotations

import json
from pathlib import Path

import ncnn
import numpy as np

from conftest import REPO, MicroPython

TOLERANCE = 1e-4  # the wheel runs the same ncnn code in float32
SKLEARN_TOLERANCE = 1e-3  # scikit-learn computes in float64; ncnn in float32 with -Ofast

# Runs a net on a list of float32 images (each sent as a packed buffer) and prints the outputs.
MP_RUN_NET = """
import ncnn_mp, json, sys
param, model, in_name, out_name, w, h, images_path, examples = sys.argv[1:]
w, h = int(w), int(h)
sys.path.append(examples)
from digits_layers import Standardize
net = ncnn_mp.Net()
net.opt.num_threads = 1
net.register_custom_layer("Standardize", Standardize)
net.load_param(param)
net.load_model(model)
with open(images_path, 'rb') as f:
    raw = f.read()
size = w * h * 4
results = []
for k in range(len(raw) // size):
    m = ncnn_mp.Mat(w, h, 1)
    m.from_bytes(raw[k * size:(k + 1) * size])
    ex = net.create_extractor()
    ex.input(in_name, m)
    out = ex.extract(out_name)
    results.append(list(memoryview(out.reshape(out.w * out.h * out.c))))
print(json.dumps(results))
"""


def run_wheel(param: Path, model: Path, in_name: str, out_name: str, images: np.ndarray) -> np.ndarray:
    net = ncnn.Net()
    net.opt.num_threads = 1
    assert net.load_param(str(param)) == 0
    assert net.load_model(str(model)) == 0
    outs = []
    for img in images:
        ex = net.create_extractor()
        ex.input(in_name, ncnn.Mat(np.ascontiguousarray(img[None, :, :], dtype=np.float32)))
        ret, out = ex.extract(out_name)
        assert ret == 0
        outs.append(np.array(out).reshape(-1))
    return np.array(outs)


def run_ncnn_mp(micropython: MicroPython, tmp_path: Path, param: Path, model: Path, in_name: str,
                out_name: str, images: np.ndarray) -> np.ndarray:
    path = tmp_path / "images.f32"
    path.write_bytes(np.ascontiguousarray(images, dtype="<f4").tobytes())
    h, w = images.shape[1:]
    out = micropython.check(MP_RUN_NET, str(param), str(model), in_name, out_name, str(w), str(h), str(path),
                            str(REPO / "examples"))
    return np.array(json.loads(out))


def test_digits_model_matches_scikit_learn(micropython: MicroPython, digits_dir: Path, tmp_path: Path) -> None:
    """The demo model, with its Python Standardize layer, against scikit-learn's own predict_proba.

    (The CPython wheel segfaults running that Python layer, so scikit-learn is the oracle here.)
    """
    count = int((digits_dir / "digits_test.txt").read_text().split()[0])
    raw = np.frombuffer((digits_dir / "digits_test.bin").read_bytes(), dtype=np.uint8)
    images = raw[:count * 64].reshape(count, 8, 8).astype(np.float32)[:60]
    expected = np.fromfile(digits_dir / "digits_test_proba.f32", dtype="<f4").reshape(count, 10)[:60]
    ours = run_ncnn_mp(micropython, tmp_path, digits_dir / "digits.param", digits_dir / "digits.bin", "data", "prob",
                       images)
    assert ours.shape == (60, 10)
    assert np.abs(ours - expected).max() < SKLEARN_TOLERANCE
    assert (ours.argmax(axis=1) == expected.argmax(axis=1)).all()


def read_pgm(path: Path) -> np.ndarray:
    data = path.read_bytes()
    magic, w, h, maxval = data.split(maxsplit=4)[:4]
    assert magic == b"P5" and maxval == b"255"
    return np.frombuffer(data[-int(w) * int(h):], dtype=np.uint8).reshape(int(h), int(w))


def test_mnist_matches_wheel(micropython: MicroPython, mnist_dir: Path, tmp_path: Path) -> None:
    images = np.stack([read_pgm(mnist_dir / f"{d}.pgm") for d in range(10)]).astype(np.float32) / 255
    args = (mnist_dir / "mnist.param", mnist_dir / "mnist.bin", "data", "fc", images)
    ours = run_ncnn_mp(micropython, tmp_path, *args)
    theirs = run_wheel(*args)
    assert ours.shape == theirs.shape == (10, 10)
    assert np.abs(ours - theirs).max() < TOLERANCE
    assert list(ours.argmax(axis=1)) == list(range(10))

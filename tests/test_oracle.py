# SPDX-License-Identifier: MIT
"""ncnn_mp gives the same numbers as an independent implementation: the CPython `ncnn` wheel
(same ncnn release, same model, same input) or scikit-learn, which trained the digits model."""

from __future__ import annotations

import json
from pathlib import Path

import ncnn
import numpy as np
import pytest

from conftest import MicroPython, shared_models
from ncnn_mp_tools.quantize_int8 import wheel_mat

TOLERANCE = 1e-4  # the wheel runs the same ncnn code in float32
SKLEARN_TOLERANCE = 1e-3  # scikit-learn computes in float64; ncnn in float32 with -Ofast

# Runs a net on a list of float32 images (each sent as a packed buffer) and prints the outputs.
MP_RUN_NET = """
import ncnn_mp, json, sys
param, model, in_name, out_name, w, h, images_path = sys.argv[1:]
w, h = int(w), int(h)
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
    flat = out.reshape(out.w * out.h * out.c)  # named: a memoryview does not keep its Mat alive
    results.append(list(memoryview(flat)))
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
        ex.input(in_name, wheel_mat(ncnn, img[None, :, :]))
        ret, out = ex.extract(out_name)
        assert ret == 0
        outs.append(np.array(out).reshape(-1))
    return np.array(outs)


def run_ncnn_mp(micropython: MicroPython, tmp_path: Path, param: Path, model: Path, in_name: str,
                out_name: str, images: np.ndarray) -> np.ndarray:
    path = tmp_path / "images.f32"
    path.write_bytes(np.ascontiguousarray(images, dtype="<f4").tobytes())
    h, w = images.shape[1:]
    out = micropython.check(MP_RUN_NET, str(param), str(model), in_name, out_name, str(w), str(h), str(path))
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


# ---------------------------------------------------------------------------
# Custom layers: the same Python source (tests/shared_layers.py, examples/digits_layers.py)
# registered with both bindings, on the same models and inputs. Both import them from where
# the harness puts them: pytest's pythonpath (pyproject.toml) and MICROPYPATH (conftest).

MP_RUN_SPEC = """
import ncnn_mp, json, sys
with open(sys.argv[1]) as f:
    spec = json.load(f)
net = ncnn_mp.Net()
net.opt.num_threads = 1
for type_name, (module, cls) in spec["layers"].items():
    net.register_custom_layer(type_name, getattr(__import__(module), cls))
net.load_param(spec["param"])
net.load_model(spec["model"] if spec["model"] else ncnn_mp.DataReader(zeros=True))
results = []
for inputs in spec["runs"]:
    ex = net.create_extractor()
    for name, (shape, values) in inputs.items():
        m = ncnn_mp.Mat(*shape)
        for i, v in enumerate(values):
            m[i] = v
        ex.input(name, m)
    outs = []
    for name in spec["outputs"]:
        out = ex.extract(name)
        outs.append(list(memoryview(out)))
    results.append(outs)
print(json.dumps(results))
"""


def run_spec_ncnn_mp(micropython: MicroPython, tmp_path: Path, spec: dict) -> list:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    return json.loads(micropython.check(MP_RUN_SPEC, str(path)))


def run_spec_wheel(spec: dict) -> list:
    import importlib

    created: list[object] = []  # the wheel segfaults unless Python keeps its layers alive

    def creator_for(cls: type) -> object:
        def create() -> object:
            layer = cls()
            created.append(layer)
            return layer
        return create

    net = ncnn.Net()
    net.opt.num_threads = 1
    for type_name, (module, cls_name) in spec["layers"].items():
        cls = getattr(importlib.import_module(module), cls_name)
        assert net.register_custom_layer(type_name, creator_for(cls), lambda layer: None) == 0
    assert net.load_param(spec["param"]) == 0
    empty = ncnn.DataReaderFromEmpty()  # the wheel crashes later unless Python keeps it alive
    assert net.load_model(spec["model"] if spec["model"] else empty) == 0
    results = []
    for inputs in spec["runs"]:
        ex = net.create_extractor()
        mats = []
        for name, (shape, values) in inputs.items():
            # Filled element by element: a Mat made over a numpy array crashes the wheel
            # when a Python layer works on it.
            m = ncnn.Mat(*shape)
            for i, v in enumerate(values):
                m[i] = v
            mats.append(m)
            ex.input(name, m)
        outs = []
        for name in spec["outputs"]:
            ret, out = ex.extract(name)
            assert ret == 0, name
            outs.append([out[i] for i in range((out.c - 1) * out.cstep + out.w * out.h * out.d)])
        results.append(outs)
    return results


def assert_same(ours: list, theirs: list, tolerance: float) -> None:
    assert len(ours) == len(theirs)
    for o_run, t_run in zip(ours, theirs):
        for o, t in zip(o_run, t_run):
            assert len(o) == len(t)
            assert np.abs(np.array(o) - np.array(t)).max() < tolerance


def test_digits_custom_layer_matches_wheel(micropython: MicroPython, digits_dir: Path, tmp_path: Path) -> None:
    """(b) a layer with params and weights: the demo's Standardize, under both bindings."""
    raw = np.frombuffer((digits_dir / "digits_test.bin").read_bytes(), dtype=np.uint8)
    spec = {"layers": {"Standardize": ["digits_layers", "Standardize"]},
            "param": str(digits_dir / "digits.param"), "model": str(digits_dir / "digits.bin"),
            "outputs": ["prob"],
            "runs": [{"data": [[8, 8, 1], [float(v) for v in raw[k * 64:(k + 1) * 64]]]} for k in range(12)]}
    ours, theirs = run_spec_ncnn_mp(micropython, tmp_path, spec), run_spec_wheel(spec)
    assert_same(ours, theirs, 1e-5)
    labels = raw[450 * 64:450 * 64 + 12]
    assert sum(int(np.argmax(r[0])) == int(y) for r, y in zip(ours, labels)) >= 11


def test_mnist_with_python_innerproduct_matches_wheel(micropython: MicroPython, mnist_dir: Path,
                                                       tmp_path: Path) -> None:
    """(a) a built-in layer type replaced by a Python implementation, in the MNIST model."""
    images = [read_pgm(mnist_dir / f"{d}.pgm").astype(np.float32) / 255 for d in range(10)]
    spec = {"layers": {"InnerProduct": ["shared_layers", "PyInnerProduct"]},
            "param": str(mnist_dir / "mnist.param"), "model": str(mnist_dir / "mnist.bin"), "outputs": ["fc"],
            "runs": [{"data": [[28, 28, 1], [float(v) for v in img.reshape(-1)]]} for img in images]}
    ours, theirs = run_spec_ncnn_mp(micropython, tmp_path, spec), run_spec_wheel(spec)
    assert_same(ours, theirs, 1e-5)
    assert [int(np.argmax(r[0])) for r in ours] == list(range(10))
    # Against ncnn's own InnerProduct: the Python one sums in double precision, ncnn in
    # float32 SIMD order, so logits near 25 differ in the third decimal.
    builtin = run_wheel(mnist_dir / "mnist.param", mnist_dir / "mnist.bin", "data", "fc", np.stack(images))
    assert np.abs(np.array([r[0] for r in ours]) - builtin).max() < 1e-3 * np.abs(builtin).max()


def test_multi_blob_and_reshaping_layers_match_wheel(micropython: MicroPython, tmp_path: Path) -> None:
    """(c) two bottoms and two tops, (d) not in place with a new shape."""
    param = tmp_path / "multi.param"
    param.write_text("7767517\n5 6\nInput a 0 1 a 0=4\nInput b 0 1 b 0=4\nSumDiff sd 2 2 a b s d\n"
                     "Input m 0 1 m 0=3 1=2\nRowSums rs 1 1 m rows\n")
    rng = np.random.default_rng(3)
    spec = {"layers": {"SumDiff": ["shared_layers", "SumDiff"], "RowSums": ["shared_layers", "RowSums"]},
            "param": str(param), "model": "", "outputs": ["s", "d", "rows"],
            "runs": [{"a": [[4], rng.uniform(-1, 1, 4).tolist()], "b": [[4], rng.uniform(-1, 1, 4).tolist()],
                      "m": [[3, 2], rng.uniform(-1, 1, 6).tolist()]} for _ in range(3)]}
    ours, theirs = run_spec_ncnn_mp(micropython, tmp_path, spec), run_spec_wheel(spec)
    assert_same(ours, theirs, 1e-5)
    a, b, m = (np.array(spec["runs"][0][k][1], dtype=np.float32) for k in ("a", "b", "m"))
    assert np.allclose(ours[0][0], a + b, atol=1e-6) and np.allclose(ours[0][1], a - b, atol=1e-6)
    assert np.allclose(ours[0][2], m.reshape(2, 3).sum(axis=1) * 0.5, atol=1e-6)


# ---------------------------------------------------------------------------
# ncnn's benchmark networks, weightless (DataReader(zeros=True)), as benchncnn runs them.

BENCH_INPUTS = {"squeezenet": ("data", "output", 227), "mobilenet": ("data", "output", 224),
                "mobilenet_v2": ("data", "output", 224), "resnet18": ("data", "output", 224),
                "shufflenet_v2": ("data", "output", 224), "yolo-fastest-1.1": ("data", "output", 320),
                "FastestDet": ("in0", "out0", 352)}

MP_RUN_BENCH = """
import ncnn_mp, json, sys
param, in_name, out_name, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
net = ncnn_mp.Net()
net.opt.num_threads = 1
net.load_param(param)
net.load_model(ncnn_mp.DataReader(zeros=True))
x = ncnn_mp.Mat(size, size, 3)
for c in range(3):
    for i in range(size * size):
        x[c * x.cstep + i] = ((i * 7 + c * 13) % 255) / 255.0
ex = net.create_extractor()
ex.input(in_name, x)
out = ex.extract(out_name)
print(json.dumps([out.dims, out.w, out.h, out.c, sum(out.to_bytes()) % 1000003]))
"""


@pytest.fixture(scope="module")
def bench_dir() -> Path:
    return shared_models("bench", *(f"{name}.param" for name in BENCH_INPUTS))


@pytest.mark.parametrize("name", sorted(BENCH_INPUTS))
def test_weightless_benchmark_net_runs_like_the_wheel(micropython: MicroPython, bench_dir: Path, name: str) -> None:
    in_name, out_name, size = BENCH_INPUTS[name]
    param = bench_dir / f"{name}.param"
    ours = json.loads(micropython.check(MP_RUN_BENCH, str(param), in_name, out_name, str(size), timeout=300))
    net = ncnn.Net()
    net.opt.num_threads = 1
    assert net.load_param(str(param)) == 0
    empty = ncnn.DataReaderFromEmpty()  # the wheel crashes later unless Python keeps it alive
    assert net.load_model(empty) == 0
    idx = np.arange(size * size)
    x = np.stack([((idx * 7 + c * 13) % 255) / 255.0 for c in range(3)]).astype(np.float32).reshape(3, size, size)
    ex = net.create_extractor()
    ex.input(in_name, ncnn.Mat(x).clone())
    ret, out = ex.extract(out_name)
    assert ret == 0
    # A detector with zero weights detects nothing: an empty Mat (np.array of which crashes the wheel).
    packed = np.array(out, dtype=np.float32).tobytes() if out.dims else b""
    assert ours == [out.dims, out.w, out.h, out.c, sum(packed) % 1000003]

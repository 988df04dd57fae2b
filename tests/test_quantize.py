# SPDX-License-Identifier: MIT
"""The project's int8 quantizer (ncnn_mp_tools/quantize_int8.py), measured with the CPython `ncnn`
wheel (opt.use_int8_inference on, 1 thread): int8 and fp16 models against the fp32 model on
MNIST (the ten digits and 1,000 generated variants) and SqueezeNet v1.1 (photos that ship
in scikit-image), the .bin layout it writes, and what it refuses.

`pytest -s tests/test_quantize.py` shows the report (sizes, agreement, score differences).
Every model is written to tmp_path; calibration and test inputs never overlap."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import ncnn
import numpy as np
import numpy.typing as npt
import pytest

from conftest import MNIST_FILES, REPO, shared_models
from ncnn_mp_tools import quantize_int8 as qz
from test_oracle import read_pgm

F32 = npt.NDArray[np.float32]
SQUEEZENET = ("squeezenet_v1.1.param", "squeezenet_v1.1.bin")
MNIST_CALIB, MNIST_TEST = 200, 1000


# ---------------------------------------------------------------------------
# Running a model and comparing its scores with the fp32 model's


def run_net(param: Path, weights: Path, in_name: str, out_name: str, inputs: Sequence[F32]) -> F32:
    net = ncnn.Net()
    net.opt.num_threads = 1
    net.opt.use_int8_inference = True  # off, ncnn runs int8 weights as garbage (see ENVIRONMENT.md)
    assert net.load_param(str(param)) == 0
    assert net.load_model(str(weights)) == 0
    outs = []
    for x in inputs:
        ex = net.create_extractor()
        ex.input(in_name, qz.wheel_mat(ncnn, x))
        ret, out = ex.extract(out_name)
        assert ret == 0
        outs.append(np.array(out, dtype=np.float32).reshape(-1))
    return np.array(outs)


@dataclass
class Agreement:
    """One model's scores against the fp32 model's, on the same inputs."""

    top1: float  # fraction of inputs with the same top-1 class
    max_abs: float  # largest absolute score difference
    mean_abs: float
    top5: float  # mean overlap of the two top-5 sets (1.0: the same five classes)
    clear_top1: float  # top-1 agreement where fp32's top-1 leads its top-2 by more than CLEAR
    clear_count: int

    CLEAR = 0.05

    @staticmethod
    def of(ref: F32, got: F32) -> Agreement:
        d = np.abs(ref - got)
        same = ref.argmax(1) == got.argmax(1)
        ranked = np.sort(ref, axis=1)
        clear = ranked[:, -1] - ranked[:, -2] > Agreement.CLEAR
        top5 = np.mean([len(set(np.argsort(-a)[:5]) & set(np.argsort(-b)[:5])) / 5 for a, b in zip(ref, got)])
        return Agreement(float(same.mean()), float(d.max()), float(d.mean()), float(top5),
                         float(same[clear].mean()) if clear.any() else 1.0, int(clear.sum()))

    def row(self, model: str, precision: str, size: int, inputs: str) -> str:
        return (f"| {model} | {precision} | {size:,} | {inputs} | {self.top1:.3f} | {self.max_abs:.4f} | "
                f"{self.mean_abs:.5f} | {self.top5:.3f} |")


HEADER = ("| model | precision | .bin bytes | inputs | top-1 agreement | max abs diff | mean abs diff "
          "| top-5 overlap |\n|---|---|---:|---|---:|---:|---:|---:|")


@dataclass
class Limits:
    """What an int8 (or fp16) model must keep; set from measurements with a margin."""

    top1: float
    max_abs: float
    mean_abs: float
    top5: float = 0.0
    clear_top1: float = 0.0

    def failures(self, a: Agreement) -> list[str]:
        checks = [(a.top1 >= self.top1, f"top-1 agreement {a.top1:.3f} < {self.top1}"),
                  (a.max_abs <= self.max_abs, f"max abs diff {a.max_abs:.4f} > {self.max_abs}"),
                  (a.mean_abs <= self.mean_abs, f"mean abs diff {a.mean_abs:.5f} > {self.mean_abs}"),
                  (a.top5 >= self.top5, f"top-5 overlap {a.top5:.3f} < {self.top5}"),
                  (a.clear_top1 >= self.clear_top1,
                   f"top-1 agreement where fp32 is clear {a.clear_top1:.3f} < {self.clear_top1}")]
        return [why for ok, why in checks if not ok]


# ---------------------------------------------------------------------------
# Deliberately broken int8 models: the limits must reject each of them.


def broken_variants(model: qz.Model) -> dict[str, qz.Model]:
    """The same int8 model with its scales wrong in ways a buggy quantizer might get them."""

    def edit(change: str) -> qz.Model:
        layers = []
        for layer in model.layers:
            loads = list(layer.loads)
            if any(load.role == "weight_scales" for load in loads):
                ws, bs = loads[-2], loads[-1]
                if change == "weight scales reversed":  # per-channel scales in the wrong order
                    loads[-2] = qz.Load(ws.role, 1, ws.values[::-1].copy())
                elif change == "weight scales x1.5":
                    loads[-2] = qz.Load(ws.role, 1, ws.values * np.float32(1.5))
                elif change == "bottom scales x8 (clipping)":
                    loads[-1] = qz.Load(bs.role, 1, bs.values * np.float32(8))
            layers.append(qz.Layer(layer.type, layer.name, layer.bottoms, layer.tops, layer.params, loads))
        return qz.Model(layers, model.blob_count)

    return {c: edit(c) for c in ("weight scales reversed", "weight scales x1.5", "bottom scales x8 (clipping)")}


def int8_model(param: Path, weights: Path, calib: Sequence[F32], method: str = "maxabs") -> qz.Model:
    """quantize_files, step by step (the model stays in memory for the broken variants)."""
    model = qz.read_model(param, weights)
    blobs = [qz.canonical_blob(model, layer.bottoms[0]) for layer in qz.int8_layers(model)]
    return qz.quantize(model, qz.calibrate(param, weights, calib, blobs, method=method))


def written(model: qz.Model, folder: Path, name: str) -> tuple[Path, Path]:
    param, weights = folder / f"{name}.param", folder / f"{name}.bin"
    qz.write_model(model, param, weights)
    return param, weights


# ---------------------------------------------------------------------------
# MNIST: the ten digits and variants generated from them


def warp(img: F32, rng: np.random.Generator) -> F32:
    """A digit rotated (+-12 degrees), scaled (0.85..1.15), shifted (+-3 px), with noise."""
    h, w = img.shape
    angle, scale = np.deg2rad(rng.uniform(-12, 12)), rng.uniform(0.85, 1.15)
    dx, dy = rng.uniform(-3, 3, 2)
    c = (w - 1) / 2
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    px, py = xx - c - dx, yy - c - dy
    sx = (np.cos(angle) * px + np.sin(angle) * py) / scale + c  # where each output pixel comes from
    sy = (-np.sin(angle) * px + np.cos(angle) * py) / scale + c
    x0, y0 = np.floor(sx).astype(int), np.floor(sy).astype(int)
    fx, fy = sx - x0, sy - y0
    padded = np.pad(img, 1)

    def at(y: npt.NDArray[np.int_], x: npt.NDArray[np.int_]) -> npt.NDArray[np.float64]:
        return padded[np.clip(y + 1, 0, h + 1), np.clip(x + 1, 0, w + 1)].astype(np.float64)

    out = (at(y0, x0) * (1 - fx) * (1 - fy) + at(y0, x0 + 1) * fx * (1 - fy)
           + at(y0 + 1, x0) * (1 - fx) * fy + at(y0 + 1, x0 + 1) * fx * fy)
    out += rng.normal(0, rng.uniform(0, 0.1), out.shape)
    return np.clip(out, 0, 1).astype(np.float32)


@dataclass
class MnistData:
    folder: Path
    digits: list[F32]  # the ten, 1x28x28 in [0, 1]
    calib: list[F32]
    test: list[F32]
    labels: npt.NDArray[np.int_]


@pytest.fixture(scope="module")
def mnist() -> MnistData:
    folder = shared_models("mnist", *MNIST_FILES)
    digits = [read_pgm(folder / f"{d}.pgm").astype(np.float32) / 255 for d in range(10)]

    def variants(n: int, seed: int) -> tuple[list[F32], npt.NDArray[np.int_]]:
        rng = np.random.default_rng(seed)
        labels = rng.integers(0, 10, n)
        return [warp(digits[d], rng)[None] for d in labels], labels

    calib, _ = variants(MNIST_CALIB, seed=1)
    test, labels = variants(MNIST_TEST, seed=2)
    return MnistData(folder, [d[None] for d in digits], calib, test, labels)


# MNIST's output `fc` is the raw scores (no softmax); their spread on the test variants is
# printed in the report. Measured (maxabs, 200 calibration variants): ten digits max 0.29;
# variants top-1 0.994, max 0.79, mean 0.059.
MNIST_TEN_LIMITS = Limits(top1=1.0, max_abs=0.6, mean_abs=0.15)
MNIST_INT8_LIMITS = Limits(top1=0.98, max_abs=1.6, mean_abs=0.10, top5=0.97)
MNIST_FP16_LIMITS = Limits(top1=1.0, max_abs=0.02, mean_abs=0.004, top5=0.995)


def test_mnist_int8_and_fp16(mnist: MnistData, tmp_path: Path) -> None:
    param, weights = mnist.folder / "mnist.param", mnist.folder / "mnist.bin"
    ref10 = run_net(param, weights, "data", "fc", mnist.digits)
    ref = run_net(param, weights, "data", "fc", mnist.test)
    assert list(ref10.argmax(1)) == list(range(10))

    model8 = int8_model(param, weights, mnist.calib)
    p8, b8 = written(model8, tmp_path, "mnist-int8")
    p16, b16 = tmp_path / "mnist-fp16.param", tmp_path / "mnist-fp16.bin"
    qz.float_files(param, weights, p16, b16)
    got10 = run_net(p8, b8, "data", "fc", mnist.digits)
    int8_ten, int8 = Agreement.of(ref10, got10), Agreement.of(ref, run_net(p8, b8, "data", "fc", mnist.test))
    fp16_ten, fp16 = (Agreement.of(ref10, run_net(p16, b16, "data", "fc", mnist.digits)),
                      Agreement.of(ref, run_net(p16, b16, "data", "fc", mnist.test)))
    report = [f"MNIST: {MNIST_CALIB} calibration variants (seed 1), {MNIST_TEST} test variants (seed 2); "
              f"fp32 scores span {ref.min():.1f}..{ref.max():.1f}; fp32 right on "
              f"{(ref.argmax(1) == mnist.labels).mean():.1%} of the variants, int8 on "
              f"{(run_net(p8, b8, 'data', 'fc', mnist.test).argmax(1) == mnist.labels).mean():.1%}",
              HEADER,
              Agreement.of(ref10, ref10).row("MNIST", "fp32", weights.stat().st_size, "10 digits"),
              int8_ten.row("MNIST", "int8", b8.stat().st_size, "10 digits"),
              int8.row("MNIST", "int8", b8.stat().st_size, f"{MNIST_TEST} variants"),
              fp16_ten.row("MNIST", "fp16", b16.stat().st_size, "10 digits"),
              fp16.row("MNIST", "fp16", b16.stat().st_size, f"{MNIST_TEST} variants")]

    broken_failures = {}
    for what, model in broken_variants(model8).items():
        bp, bb = written(model, tmp_path, "mnist-broken")
        a = Agreement.of(ref, run_net(bp, bb, "data", "fc", mnist.test))
        report.append(a.row("MNIST", f"int8, {what}", bb.stat().st_size, f"{MNIST_TEST} variants"))
        broken_failures[what] = MNIST_INT8_LIMITS.failures(a)
    print("\n" + "\n".join(report))

    assert list(got10.argmax(1)) == list(range(10)), "int8 must still classify the ten digits"
    assert not MNIST_TEN_LIMITS.failures(int8_ten)
    assert not MNIST_INT8_LIMITS.failures(int8)
    assert not MNIST_FP16_LIMITS.failures(fp16_ten) and not MNIST_FP16_LIMITS.failures(fp16)
    assert all(broken_failures.values()), f"a broken int8 model passes the limits: {broken_failures}"
    # what a model with int8 weights costs: 1 byte per weight, plus the scales
    assert b8.stat().st_size < 0.3 * weights.stat().st_size and b16.stat().st_size < 0.51 * weights.stat().st_size


def generic_int8(layer: qz.Layer, x: F32) -> F32:
    """ncnn's generic forward_int8 (src/layer/convolution.cpp, convolutiondepthwise.cpp,
    innerproduct.cpp) in numpy, reading the loads the quantizer wrote: the input quantized
    with the bottom scale, integer products, then sum / (bottom scale * weight scale) + bias,
    then the activation. (Stride 1, no dilation: what the models here use.)"""
    weight, *rest = layer.loads
    inner = layer.type == "InnerProduct"
    bias = rest[0].values if layer.get_int(1 if inner else 5, 0) else None
    ws, bs = layer.loads[-2].values, float(layer.loads[-1].values[0])
    assert weight.int8 is not None
    xq = qz.float2int8(x * np.float32(bs)).astype(np.int32)
    if inner:
        acc = weight.int8.reshape(ws.size, -1).astype(np.int32) @ xq.reshape(-1)
        scale = ws
    else:
        assert layer.get_int(3, 1) == 1 and layer.get_int(2, 1) == 1
        k, pad, nout = layer.get_int(1, 0), layer.get_int(4, 0), layer.get_int(0, 0)
        group = layer.get_int(7, 1) if layer.type == "ConvolutionDepthWise" else 1
        cin_g, nout_g = xq.shape[0] // group, nout // group
        w = weight.int8.reshape(nout, cin_g, k, k).astype(np.int32)
        xp = np.pad(xq, ((0, 0), (pad, pad), (pad, pad)))
        win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(1, 2))  # c, oh, ow, k, k
        acc = np.concatenate([np.einsum("chwij,ocij->ohw", win[g * cin_g:(g + 1) * cin_g],
                                        w[g * nout_g:(g + 1) * nout_g]) for g in range(group)])
        scale = np.repeat(ws, nout_g) if layer.type == "ConvolutionDepthWise" else ws  # per group / per channel
    scale_in = np.where(scale == 0, 0, 1 / (bs * scale)).astype(np.float32)
    shape = (-1,) + (1,) * (acc.ndim - 1)
    out = acc.astype(np.float32) * scale_in.reshape(shape)
    if bias is not None:
        out += bias.reshape(shape)
    if layer.get_int(9, 0) == 1:
        out = np.maximum(out, 0)
    return out.astype(np.float32)


def worst_layer_difference(model8: qz.Model, param: Path, weights: Path, inputs: Sequence[F32]) -> float:
    """The largest difference (relative to the layer's output range) between each int8
    layer's output in the wheel and generic_int8 on that layer's input in the wheel."""
    net = ncnn.Net()
    net.opt.num_threads = 1
    net.opt.lightmode = False
    assert net.load_param(str(param)) == 0 and net.load_model(str(weights)) == 0
    worst = 0.0
    for x in inputs:
        ex = net.create_extractor()
        ex.input("data", qz.wheel_mat(ncnn, x))
        for layer in qz.int8_layers(model8):
            blobs = []
            for name in (layer.bottoms[0], layer.tops[0]):
                ret, mat = ex.extract(name)
                assert ret == 0
                blobs.append(np.array(mat, dtype=np.float32).reshape(-1))
            ours = generic_int8(layer, blobs[0].reshape(np.array(ex.extract(layer.bottoms[0])[1]).shape)).reshape(-1)
            assert ours.shape == blobs[1].shape, layer.name
            worst = max(worst, float(np.abs(ours - blobs[1]).max() / max(1.0, float(np.abs(ours).max()))))
    return worst


def test_mnist_int8_layers_compute_what_ncnn_generic_code_computes(mnist: MnistData, tmp_path: Path) -> None:
    """Each int8 layer's output in the wheel equals ncnn's generic int8 arithmetic (what an MCU
    build runs) applied to the weights, scales and bias the quantizer wrote: the .bin means
    to ncnn what the quantizer meant."""
    param, weights = mnist.folder / "mnist.param", mnist.folder / "mnist.bin"
    model8 = int8_model(param, weights, mnist.calib)
    worst = worst_layer_difference(model8, *written(model8, tmp_path, "mnist-int8"), mnist.digits[:5] + mnist.test[:5])
    print(f"\nMNIST int8 layers, wheel vs ncnn's generic int8 arithmetic in numpy: worst relative difference {worst:.2e}")
    assert worst < 1e-4


TINY = """7767517
6 7
Input                data   0 1 data 0=12 1=12 2=8
ConvolutionDepthWise dw     1 1 data dw 0=8 1=3 4=1 5=1 6=72 7=8 9=1
ConvolutionDepthWise gc     1 1 dw gc 0=8 1=3 4=1 5=1 6=288 7=2
Split                split  1 2 gc gc_a gc_b
InnerProduct         fc     1 1 gc_a fc 0=10 1=1 2=11520
Convolution          pw     1 1 gc_b pw 0=4 1=1 6=32
"""


def test_depthwise_and_shared_bottoms(tmp_path: Path) -> None:
    """A generated model with a depthwise and a grouped ConvolutionDepthWise (per-group weight
    scales, 8=1) and one blob read through a Split by an InnerProduct and a Convolution (one
    scale for both): the wheel computes what the generic int8 code computes."""
    rng = np.random.default_rng(7)

    def tagged(n: int) -> bytes:
        return bytes(4) + rng.normal(0, 0.3, n).astype("<f4").tobytes()

    def floats(n: int) -> bytes:
        return rng.normal(0, 0.1, n).astype("<f4").tobytes()

    param, weights = tmp_path / "tiny.param", tmp_path / "tiny.bin"
    param.write_text(TINY)
    weights.write_bytes(tagged(72) + floats(8) + tagged(288) + floats(8) + tagged(1152 * 10) + floats(10) + tagged(32))
    inputs = [rng.normal(0, 1, (8, 12, 12)).astype(np.float32) for _ in range(30)]
    model8 = int8_model(param, weights, inputs[:20])
    p8, b8 = written(model8, tmp_path, "tiny-int8")
    assert [ln.split()[-1] for ln in p8.read_text().splitlines()[3:5]] == ["8=1", "8=1"]
    gc = model8.layer("gc")
    assert gc.loads[-2].values.size == 2  # per group
    assert model8.layer("fc").loads[-1].values[0] == model8.layer("pw").loads[-1].values[0]
    worst = worst_layer_difference(model8, p8, b8, inputs[20:])
    print(f"\ntiny depthwise model, wheel vs generic int8 arithmetic: worst relative difference {worst:.2e}")
    # The wheel's packed (8 channels) x86 depthwise kernel dequantizes with _mm_rcp_ps, a
    # reciprocal good to 1.5 * 2**-12 (3.7e-4): measured 1.6e-4 here; ncnn's generic code
    # divides exactly. One quantization step off anywhere would be ~1e-2.
    assert worst < 5e-4
    ref, got = (run_net(param, weights, "data", "fc", inputs[20:]), run_net(p8, b8, "data", "fc", inputs[20:]))
    assert np.abs(ref - got).max() < 0.05 * np.abs(ref).max()


def test_calibration_samples_in_any_memory_order(tmp_path: Path) -> None:
    """Samples that are views in another memory order (a transposed H x W x C photo, as an image
    reader gives) calibrate exactly as their C-ordered copies: the wheel's Mat borrows an array's
    memory, and the contiguous copy calibration made of such a sample was once freed before the
    extract, so the scales came from freed memory."""
    rng = np.random.default_rng(3)
    param, weights = tmp_path / "tiny.param", tmp_path / "tiny.bin"
    param.write_text(TINY)
    tagged = [bytes(4) + rng.normal(0, 0.3, n).astype("<f4").tobytes() for n in (72, 288, 11520, 32)]
    floats = [rng.normal(0, 0.1, n).astype("<f4").tobytes() for n in (8, 8, 10)]
    weights.write_bytes(tagged[0] + floats[0] + tagged[1] + floats[1] + tagged[2] + floats[2] + tagged[3])
    hwc = [rng.normal(0, 1, (12, 12, 8)).astype(np.float32) for _ in range(6)]
    strided = [x.transpose(2, 0, 1) for x in hwc]
    assert not any(x.flags["C_CONTIGUOUS"] for x in strided)
    blobs = ["data", "dw"]
    assert qz.calibrate(param, weights, strided, blobs) == qz.calibrate(param, weights, [np.ascontiguousarray(x)
                                                                                      for x in strided], blobs)


# ---------------------------------------------------------------------------
# SqueezeNet v1.1 on photos from scikit-image


def squeezenet_input(rgb: npt.NDArray[np.uint8]) -> F32:
    """real/README.md's preprocessing: 227x227 BGR, mean 104/117/123 subtracted."""
    rgb = np.ascontiguousarray(rgb)
    h, w = rgb.shape[:2]
    m = ncnn.Mat.from_pixels_resize(rgb, ncnn.Mat.PixelType.PIXEL_RGB2BGR, w, h, 227, 227)
    m.substract_mean_normalize([104.0, 117.0, 123.0], [])
    return np.array(m, dtype=np.float32).copy()


def views(rgb: npt.NDArray[np.uint8]) -> list[npt.NDArray[np.uint8]]:
    """15 views of a photo: itself, flips, crops (75% and 60%, some flipped), halves, a quarter turn."""
    h, w = rgb.shape[:2]
    a, b = int(h * 0.75), int(w * 0.75)
    a6, b6 = int(h * 0.6), int(w * 0.6)
    return [rgb, rgb[:, ::-1], rgb[:a, :b], rgb[h - a:, w - b:], rgb[:a, w - b:][:, ::-1], rgb[h - a:, :b],
            rgb[(h - a) // 2:(h - a) // 2 + a, (w - b) // 2:(w - b) // 2 + b], rgb[::-1],
            rgb[:a6, :b6][:, ::-1], rgb[h - a6:, w - b6:][:, ::-1],
            rgb[(h - a6) // 2:(h - a6) // 2 + a6, (w - b6) // 2:(w - b6) // 2 + b6],
            np.rot90(rgb), rgb[::2, ::2][::-1, ::-1], rgb[:, :w // 2], rgb[:, w // 2:]]


@dataclass
class Photos:
    folder: Path
    calib: list[F32]
    test: list[F32]
    names: list[str]  # of the test inputs


@pytest.fixture(scope="module")
def photos() -> Photos:
    folder = shared_models("real", *SQUEEZENET)
    import skimage.data as sd

    def rgb(gray: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
        return np.repeat(gray[:, :, None], 3, axis=2)

    left, right, _ = sd.stereo_motorcycle()
    calib_photos = [sd.astronaut(), sd.rocket(), sd.hubble_deep_field(), sd.immunohistochemistry(),
                    rgb(sd.camera()), rgb(sd.coins()), rgb(sd.grass()), rgb(sd.brick())]
    test_photos = {"chelsea": sd.chelsea(), "coffee": sd.coffee(), "retina": sd.retina(),
                   "motorcycle_left": left, "motorcycle_right": right}
    calib = [squeezenet_input(v) for p in calib_photos for v in views(p)][::3]  # 40 of 120
    test, names = [], []
    for name, photo in test_photos.items():
        for i, v in enumerate(views(photo)):
            test.append(squeezenet_input(v))
            names.append(f"{name}#{i}")
    return Photos(folder, calib, test, names)


# Measured (maxabs, 40 calibration views): top-1 0.933 (every disagreement where fp32's top
# two were within 0.05), max 0.086, top-5 0.928. Other calibration sets and methods ranged
# 0.88..0.97: the photos' near-ties decide.
SQUEEZENET_INT8_LIMITS = Limits(top1=0.85, max_abs=0.15, mean_abs=0.0002, top5=0.88, clear_top1=0.98)
SQUEEZENET_FP16_LIMITS = Limits(top1=1.0, max_abs=1e-6, mean_abs=1e-7, top5=1.0, clear_top1=1.0)


def test_widen_to_fp32_command(tmp_path: Path) -> None:
    """--fp32 on NanoDet-m (published with fp16 weights): the .bin about twice as large, every
    tagged weight plain fp32 now, and the wheel's outputs unchanged (fp16 widens exactly)."""
    real = shared_models("real", "nanodet_m.param", "nanodet_m.bin")
    out_p, out_b = tmp_path / "n.param", tmp_path / "n.bin"
    r = subprocess.run([sys.executable, "-m", "ncnn_mp_tools.quantize_int8", str(real / "nanodet_m.param"),
                        str(real / "nanodet_m.bin"), str(out_p), str(out_b), "--fp32"], capture_output=True, text=True,
                       cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert 1.9 < out_b.stat().st_size / (real / "nanodet_m.bin").stat().st_size < 2.0, r.stdout
    assert {load.storage for layer in qz.read_model(out_p, out_b).layers for load in layer.loads} == {"fp32"}
    x = np.random.default_rng(3).normal(0, 1, (1, 3, 96, 96)).astype(np.float32)
    for blob in ("792", "839"):
        want = run_net(real / "nanodet_m.param", real / "nanodet_m.bin", "input.1", blob, list(x))
        assert np.array_equal(run_net(out_p, out_b, "input.1", blob, list(x)), want), blob


def test_squeezenet_int8_and_fp16(photos: Photos, tmp_path: Path) -> None:
    param, shipped = photos.folder / SQUEEZENET[0], photos.folder / SQUEEZENET[1]
    # The shipped .bin stores its weights as fp16 already: the fp32 model is the same values
    # written as fp32 (what ncnn computes with either way).
    p32, b32 = written(qz.convert_fp32(qz.read_model(param, shipped)), tmp_path, "squeezenet-fp32")
    p16, b16 = tmp_path / "squeezenet-fp16.param", tmp_path / "squeezenet-fp16.bin"
    qz.float_files(p32, b32, p16, b16)
    ref = run_net(p32, b32, "data", "prob", photos.test)
    model8 = int8_model(p32, b32, photos.calib)
    p8, b8 = written(model8, tmp_path, "squeezenet-int8")
    got = run_net(p8, b8, "data", "prob", photos.test)
    int8, fp16 = Agreement.of(ref, got), Agreement.of(ref, run_net(p16, b16, "data", "prob", photos.test))
    chelsea, coffee = photos.names.index("chelsea#0"), photos.names.index("coffee#0")
    n = f"{len(photos.test)} photo views"
    report = [f"SqueezeNet v1.1: {len(photos.calib)} calibration views of 8 photos, {len(photos.test)} test "
              f"views of 5 others; {int8.clear_count} views where fp32's top-1 leads by > {Agreement.CLEAR}",
              HEADER,
              Agreement.of(ref, ref).row("SqueezeNet", "fp32", b32.stat().st_size, n),
              fp16.row("SqueezeNet", "fp16", b16.stat().st_size, n),
              int8.row("SqueezeNet", "int8", b8.stat().st_size, n)]
    disagree = [f"{photos.names[i]} {ref[i].argmax()}->{got[i].argmax()} (fp32 margin "
                f"{np.sort(ref[i])[-1] - np.sort(ref[i])[-2]:.3f})" for i in np.nonzero(ref.argmax(1) != got.argmax(1))[0]]
    report.append(f"int8 top-1 changed on: {', '.join(disagree) or 'none'}")
    report.append(f"chelsea: fp32 {ref[chelsea].argmax()} {ref[chelsea].max():.4f}, int8 {got[chelsea].argmax()} "
                  f"{got[chelsea].max():.4f}; coffee: fp32 {ref[coffee].argmax()} {ref[coffee].max():.4f}, "
                  f"int8 {got[coffee].argmax()} {got[coffee].max():.4f}")
    broken_failures = {}
    for what, model in broken_variants(model8).items():
        bp, bb = written(model, tmp_path, "squeezenet-broken")
        a = Agreement.of(ref, run_net(bp, bb, "data", "prob", photos.test))
        report.append(a.row("SqueezeNet", f"int8, {what}", bb.stat().st_size, n))
        broken_failures[what] = SQUEEZENET_INT8_LIMITS.failures(a)
    print("\n" + "\n".join(report))

    assert (ref[chelsea].argmax(), ref[coffee].argmax()) == (285, 967)
    assert (got[chelsea].argmax(), got[coffee].argmax()) == (285, 967)
    assert not SQUEEZENET_INT8_LIMITS.failures(int8)
    assert not SQUEEZENET_FP16_LIMITS.failures(fp16)
    assert all(broken_failures.values()), f"a broken int8 model passes the limits: {broken_failures}"
    assert b16.read_bytes() == shipped.read_bytes(), "fp16 storage is byte for byte the published fp16 .bin"
    assert b8.stat().st_size < 0.26 * b32.stat().st_size


# ---------------------------------------------------------------------------
# The .bin layout, and what the quantizer refuses


def expected_int8_bin_size(model: qz.Model) -> int:
    """The int8 .bin's size from ncnn's load_model sequence, written out independently."""

    def a4(n: int) -> int:
        return (n + 3) // 4 * 4

    size = 0
    for layer in model.layers:
        if layer.type in ("Convolution", "ConvolutionDepthWise", "InnerProduct"):
            inner = layer.type == "InnerProduct"
            nout, wsize = layer.get_int(0, 0), layer.get_int(2 if inner else 6, 0)
            rows = layer.get_int(7, 1) if layer.type == "ConvolutionDepthWise" else nout
            bias = layer.get_int(1 if inner else 5, 0)
            size += 4 + a4(wsize) + 4 * nout * bias + 4 * rows + 4  # tag, int8, bias, weight scales, bottom scale
        else:
            size += sum(len(load.raw) for load in layer.loads)
    return size


def test_bin_layout(mnist: MnistData, tmp_path: Path) -> None:
    param, weights = mnist.folder / "mnist.param", mnist.folder / "mnist.bin"
    model = qz.read_model(param, weights)
    assert model.bin_bytes() == weights.read_bytes()  # read and written back: the same bytes
    p8, b8 = written(int8_model(param, weights, mnist.calib[:20]), tmp_path, "int8")
    assert b8.stat().st_size == expected_int8_bin_size(model)
    lines = p8.read_text().splitlines()
    assert [ln.split()[1] for ln in lines if ln.split()[-1] == "8=2"] == ["conv0", "conv1", "fc"]
    data = b8.read_bytes()
    conv0 = model.layer("conv0")
    assert data[:4] == bytes.fromhex("384b0d00")  # 0x000D4B38, little-endian: int8 weights follow
    after = 4 + 200  # conv0: 200 int8 weights, then 8 biases, 8 weight scales, 1 bottom scale
    assert np.array_equal(np.frombuffer(data[after:after + 32], "<f4"), conv0.loads[1].values)
    scales = np.frombuffer(data[after + 32:after + 68], "<f4")
    assert np.allclose(scales[:8], 127 / np.abs(conv0.loads[0].values.reshape(8, -1)).max(1))
    assert scales[8] == pytest.approx(127.0)  # the input pixels' max is 1.0
    with pytest.raises(qz.QuantizeError, match="'conv0' .*already"):
        qz.read_model(p8, b8)


def test_refusals(mnist: MnistData, tmp_path: Path) -> None:
    """Each refusal names the problem (and the layer), and writes no file."""
    param_text = (mnist.folder / "mnist.param").read_text()
    weights = (mnist.folder / "mnist.bin").read_bytes()
    out_p, out_b = tmp_path / "out.param", tmp_path / "out.bin"

    def refused(text: str, data: bytes, match: str) -> None:
        p, b = tmp_path / "in.param", tmp_path / "in.bin"
        p.write_text(text)
        b.write_bytes(data)
        with pytest.raises(qz.QuantizeError, match=match):
            qz.float_files(p, b, out_p, out_b)
        with pytest.raises(qz.QuantizeError, match=match):
            qz.quantize_files(p, b, out_p, out_b, mnist.calib[:2])
        assert not out_p.exists() and not out_b.exists()

    custom = param_text.replace("6 7", "7 8").replace("Pooling         pool0   1 1 conv0 pool0",
                                                     "MyScale  mine 1 1 conv0 mid 0=8\nPooling pool0 1 1 mid pool0")
    refused(custom, weights, "unknown layer type.*'mine' \\(MyScale\\)")
    lstm = param_text.replace("6 7", "7 8").replace("Pooling         pool0   1 1 conv0 pool0",
                                                   "LSTM  rnn 1 1 conv0 mid 0=8\nPooling pool0 1 1 mid pool0")
    refused(lstm, weights, "'rnn' \\(LSTM\\)")
    refused(param_text, weights[:-8], "'fc' \\(InnerProduct\\).*\\.bin ends")
    refused(param_text, weights + bytes(4), "4 bytes left over")
    # a custom type declared with its layout goes through (8 floats of type 1 after conv0's bias)
    mid = 4 + 4 * 200 + 4 * 8
    name, layout = qz.parse_layout("MyScale=1:@0")
    (tmp_path / "c.param").write_text(custom)
    (tmp_path / "c.bin").write_bytes(weights[:mid] + np.ones(8, "<f4").tobytes() + weights[mid:])
    qz.float_files(tmp_path / "c.param", tmp_path / "c.bin", out_p, out_b, layouts={name: layout})
    assert out_b.stat().st_size == 32 + (4 + 2 * 200 + 32) + (4 + 2 * 3200 + 64) + (4 + 2 * 2560 + 40)


def test_command_line(mnist: MnistData, tmp_path: Path) -> None:
    tool = ["-m", "ncnn_mp_tools.quantize_int8"]
    param, weights = mnist.folder / "mnist.param", mnist.folder / "mnist.bin"
    np.save(tmp_path / "calib.npy", np.stack(mnist.calib[:50]))
    p = subprocess.run([sys.executable, *tool, str(param), str(weights), str(tmp_path / "q.param"),
                        str(tmp_path / "q.bin"), "--calib", str(tmp_path / "calib.npy"), "--method", "kl", "--skip", "fc"],
                       capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 0, p.stderr
    assert "int8  layer 'conv1' (Convolution)" in p.stdout and "fp32  layer 'fc' (InnerProduct): skipped" in p.stdout
    assert (tmp_path / "q.bin").stat().st_size == 4 + 200 + 32 + 32 + 4 + (4 + 3200 + 64 + 64 + 4) + 10284
    got = run_net(tmp_path / "q.param", tmp_path / "q.bin", "data", "fc", mnist.digits)
    assert list(got.argmax(1)) == list(range(10))
    p = subprocess.run([sys.executable, *tool, str(param), str(weights), str(tmp_path / "h.param"),
                        str(tmp_path / "h.bin"), "--fp16", "-q"], capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 0 and p.stdout == "", p.stderr
    assert (tmp_path / "h.bin").stat().st_size == 12068
    p = subprocess.run([sys.executable, *tool, str(tmp_path / "q.param"), str(tmp_path / "q.bin"),
                        str(tmp_path / "x.param"), str(tmp_path / "x.bin"), "--fp16"], capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 1 and "already quantized" in p.stderr and not (tmp_path / "x.bin").exists()

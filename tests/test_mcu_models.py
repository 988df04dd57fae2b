# SPDX-License-Identifier: MIT
"""Real models on the microcontrollers (QEMU's Cortex-M3 board, its RISC-V rv32 board, and the
hard-float Cortex-M4F board):
weights in place in the board's flash (its ROMFS), fp32 and int8 (ncnn_mp_tools/quantize_int8.py),
the same photos as the CPython wheel, the same outputs within a stated tolerance, the same
detections.

- RetinaFace MobileNet-0.25 (../shared/models/real; shipped fp16, rewritten as fp32 so the
  weights can stay in flash) on scikit-image's astronaut at 160x160: every output within
  FP32_TOL of the wheel's (int8: the int8 model in the wheel, within INT8_TOL), the faces
  decoded on the board (ncnn_mp_lib/retinaface.py) with IoU >= 0.95 and scores within 1e-3 of
  the same decoding of the wheel's outputs under CPython.
- NanoDet-m (shipped fp16, widened to fp32) on scikit-image's coffee letterboxed to 160x128:
  every output within FP32_TOL of the wheel's, the objects (a cup, a dining table) decoded on
  the board (ncnn_mp_lib/nanodet.py) as the same decoding of the wheel's outputs.
- MNIST int8 on the ten digits: the wheel's int8 model's top-1, and its scores within INT8_TOL.
- The weights are read where they lie (no byte copied or converted), and the flash holds
  the same bytes after the extracts.
Prints what each costs (emulated instructions, C heap high-water) for docs/performance.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import ncnn
import numpy as np
import numpy.typing as npt
import pytest

from ncnn_mp_lib import detection, nanodet, retinaface  # (frozen into the boards too)
from conftest import REPO, QemuBoard, _firmware, shared_models
from ncnn_mp_tools import quantize_int8 as qz
from ncnn_mp_tools.romfs_pack import pack
from real_models import (NANODET_SIDE, SIZE, mnist_digits, mnist_int8, nanodet_input, nanodet_int8,
                         nanodet_model,
                         photo_input, retinaface_models)

pytestmark = pytest.mark.mcu
F32 = npt.NDArray[np.float32]
FP32_TOL = 2e-3  # the board's generic float code against the wheel's x86 kernels (other sum orders)
INT8_TOL = 0.15  # generic int8 code against the wheel's x86 kernels: a rounding step apart here and there
RETINA_OUTPUTS = [name for s in retinaface.STRIDES for name in retinaface.output_names(s)]
# An int8 chain on the board against the same model on the desktop's kernels (the memcheck
# firmware): the int8 layers compute the same integers, but ncnn's float layers between them
# (x86 there, generic here) can differ in the last bit and flip a rounding where a float
# blob is quantized again.
CHAIN_TOL = INT8_TOL
# Against the fp32 model in the wheel (the accuracy bar for int8 between layers).
CHAIN_IOU, CHAIN_SCORE = 0.9, 0.05


def wheel_outputs(param: Path, weights: Path, in_name: str, outs: list[str], x: F32) -> dict[str, F32]:
    net = ncnn.Net()
    net.opt.num_threads = 1
    assert net.load_param(str(param)) == 0 and net.load_model(str(weights)) == 0
    ex = net.create_extractor()
    ex.input(in_name, qz.wheel_mat(ncnn, x))
    result = {}
    for name in outs:
        ret, m = ex.extract(name)
        assert ret == 0
        result[name] = np.array(m, dtype=np.float32).reshape(max(m.c, 1), -1)  # channel by channel
    return result


def kernels_outputs(param: Path, weights: Path, in_name: str, outs: list[str], x: F32) -> dict[str, F32]:
    """A model's outputs on the desktop firmware with ncnn_mp's kernels (profile memcheck, run
    natively: ncnn_mp_tools/probes/run_net.py): the reference for an int8 model on the boards' kernels,
    and for an int8 chain, which the wheel's own layers cannot run."""
    return kernels_batch(param, weights, in_name, outs, x[None])[0]


def kernels_batch(param: Path, weights: Path, in_name: str, outs: list[str], x: F32) -> list[dict[str, F32]]:
    """kernels_outputs for each of x's inputs (N, c, h, w), in one run of the firmware."""
    from ncnn_mp_tools.convert import Model
    from ncnn_mp_tools.convert import kernels_outputs as desktop_kernels

    model = Model(param, weights, in_name, x.shape[1:], outs)
    return [dict(zip(outs, got)) for got in desktop_kernels(model, x, _firmware("memcheck"))]


def faces(outs: dict[str, F32], size: int = SIZE) -> list[list[float]]:
    """RetinaFace's faces (score, box) from its outputs at size x size (ncnn_mp_lib/retinaface.py)."""
    by_stride = {}
    for stride in retinaface.STRIDES:
        cls, bbox, landmark = (outs[n] for n in retinaface.output_names(stride))
        side = size // stride
        by_stride[stride] = (side, side, side * side, cls.reshape(-1).tolist(), bbox.reshape(-1).tolist(),
                             landmark.reshape(-1).tolist())
    return [[float(v) for v in f[:5]] for f in retinaface.detect(by_stride)]


def objects(outs: dict[str, F32], w: int) -> list[list[float]]:
    """NanoDet-m's objects (score, box, class) from its outputs for an input w wide (ncnn_mp_lib/nanodet.py)."""
    by_stride = {s: (w // s, outs[nanodet.OUTPUTS[s][0]].size // nanodet.CLASSES,
                     *(outs[n].reshape(-1).tolist() for n in nanodet.OUTPUTS[s])) for s in nanodet.STRIDES}
    return [[*map(float, o[:5]), o[5]] for o in nanodet.detect(by_stride)]  # type: ignore[arg-type]


def close_to(got: list[list[float]], want: list[list[float]], iou: float, score: float, what: str) -> None:
    """Detections (score, box[, class]) as the reference's: as many, each box within the IoU,
    each score within `score` (and the same class)."""
    assert len(got) == len(want), (what, got, want)
    for g, w in zip(got, want):
        assert abs(g[0] - w[0]) <= score, (what, g, w)
        assert detection.box_iou(g[1:5], w[1:5]) >= iou, (what, g, w)
        assert g[5:] == w[5:], (what, g, w)


def padded(channels: F32) -> bytes:
    """A 3-D Mat's bytes: each channel padded to 16 bytes, as ncnn lays it out."""
    per = channels.shape[1]
    step = -(-per * 4 // 16) * 4
    out = np.zeros((channels.shape[0], step), dtype=np.float32)
    out[:, :per] = channels
    return out.tobytes()


def run_board(board: QemuBoard, files: dict[str, bytes], config: dict, timeout: float = 600) -> str:
    """tests/mcu_models_board.py on the board, with `files` as its ROMFS."""
    source = f"CONFIG = {config!r}\n" + (REPO / "tests" / "mcu_models_board.py").read_text()
    image = board.binary.parent / f"romfs-{config['detector']}.img"
    image.write_bytes(pack(files))
    from ci.qemu import run_script

    r = run_script(board.profile, board.binary, source.encode(), timeout=timeout, icount=True, romfs=image)
    assert r.returncode == 0, r.output
    print(r.output)
    return r.output


def lines(output: str, what: str) -> list[list[str]]:
    return [line.split()[1:] for line in output.splitlines() if line.startswith(what + " ")]


def check_common(output: str, models: list[str], tol: dict[str, float]) -> None:
    for model in models:
        (weights,) = [w for w in lines(output, "weights") if w[0] == model]
        in_place, copied, converted = (int(v) for v in weights[1:4])
        assert in_place > 0 and copied == 0 and converted == 0, weights  # every weight read where it lies
        assert ["unchanged", model, "True"] in lines(output, "flash"), f"{model}: the weights in flash changed"
        for row in lines(output, "maxdiff"):
            if row[0] == model:
                assert float(row[2]) <= tol[model], f"{model}: board vs wheel differ by {row[2]} (> {tol[model]})"
        for row in lines(output, "stack"):  # the C stack taken (painted) within what ncnn_mp asks
            if row[0] == model:
                load, extract, needed, reserve = (int(v) for v in row[2:])
                print("stack", model, "load", load, "of", reserve, "extract", extract, "of", needed)
                assert load <= reserve and extract <= needed, f"{model}: the stack check would let a thread overflow: {row}"


@pytest.fixture(scope="module", params=["qemu", "rv32", "qemu-m4f", "xtensa", "esp32core"])
def board(request: pytest.FixtureRequest) -> QemuBoard:
    """Each architecture's board, with the same ncnn options and layers (profiles qemu, rv32,
    and qemu-m4f: the Cortex-M4F, hard float and DSP instructions)."""
    return QemuBoard(request.param)


@pytest.fixture(scope="module")
def retina_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    return retinaface_models(tmp_path_factory.mktemp("retinaface"))


def test_retinaface_on_the_board(board: QemuBoard, retina_models: dict[str, tuple[Path, Path]]) -> None:
    import skimage.data

    x = photo_input(skimage.data.astronaut(), SIZE)
    files = {"in0.f32": x.tobytes()}
    expected: dict[str, list[list[float]]] = {}
    for model, (param, weights) in retina_models.items():
        files[model + ".param"], files[model + ".bin"] = param.read_bytes(), weights.read_bytes()
        outs = (kernels_outputs if model == "int8c" else wheel_outputs)(param, weights, "data", RETINA_OUTPUTS, x)
        for name, value in outs.items():
            files[f"ref_{model}_0_{name}.f32"] = padded(value)
        expected[model] = faces(outs)
    config = {"models": list(retina_models), "images": 1, "size": [SIZE, SIZE, 3], "input": "data",
              "outputs": RETINA_OUTPUTS, "detector": "retinaface"}
    output = run_board(board, files, config)
    check_common(output, list(retina_models), {"fp32": FP32_TOL, "int8": INT8_TOL, "int8c": CHAIN_TOL})
    for model, want in expected.items():
        got = [[float(v) for v in row[2:]] for row in lines(output, "face") if row[0] == model]
        assert want, f"{model}: the reference finds no face in the astronaut photo at {SIZE}x{SIZE}"
        close_to(got, want, 0.95, 1e-3, model)
        if model == "int8c":  # int8 between layers: the fp32 model's face
            close_to(got, expected["fp32"], CHAIN_IOU, CHAIN_SCORE, "int8c against fp32")


def test_nanodet_on_the_board(board: QemuBoard, tmp_path: Path) -> None:
    import skimage.data

    param, weights = nanodet_model(tmp_path)
    x = nanodet_input(skimage.data.coffee(), NANODET_SIDE)
    outputs = [name for s in nanodet.STRIDES for name in nanodet.OUTPUTS[s]]
    files = {"in0.f32": x.tobytes(), "fp32.param": param.read_bytes(), "fp32.bin": weights.read_bytes()}
    outs = wheel_outputs(param, weights, nanodet.INPUT, outputs, x)
    for name, value in outs.items():
        files[f"ref_fp32_0_{name}.f32"] = padded(value)
    c, h, w = x.shape
    want = objects(outs, w)
    assert sorted(o[5] for o in want) == [41, 60], want  # a cup on a dining table
    config = {"models": ["fp32"], "images": 1, "size": [w, h, c], "input": nanodet.INPUT, "outputs": outputs,
              "detector": "nanodet"}
    output = run_board(board, files, config, timeout=900)
    check_common(output, ["fp32"], {"fp32": FP32_TOL})
    got = [[float(v) for v in row[2:]] for row in lines(output, "object")]
    assert len(got) == len(want), (got, want)
    for g, o in zip(got, want):
        assert int(g[5]) == o[5] and abs(g[0] - o[0]) <= 1e-3, (g, o)
        assert detection.box_iou(g[1:5], o[1:5]) >= 0.95, (g, o)


def test_nanodet_int8_on_the_board(board: QemuBoard, tmp_path: Path) -> None:
    """NanoDet-m in int8 and with int8 between layers: the desktop kernels' outputs, and the
    fp32 model's objects in the wheel (a cup on a dining table)."""
    import skimage.data

    fp32 = nanodet_model(tmp_path)
    models = nanodet_int8(tmp_path, fp32)
    x = nanodet_input(skimage.data.coffee(), NANODET_SIDE)
    outputs = [name for s in nanodet.STRIDES for name in nanodet.OUTPUTS[s]]
    c, h, w = x.shape

    fp32_objects = objects(wheel_outputs(*fp32, nanodet.INPUT, outputs, x), w)
    files, expected = {"in0.f32": x.tobytes()}, {}
    for model, (param, weights) in models.items():
        files[model + ".param"], files[model + ".bin"] = param.read_bytes(), weights.read_bytes()
        outs = kernels_outputs(param, weights, nanodet.INPUT, outputs, x)
        for name, value in outs.items():
            files[f"ref_{model}_0_{name}.f32"] = padded(value)
        expected[model] = objects(outs, w)
    config = {"models": list(models), "images": 1, "size": [w, h, c], "input": nanodet.INPUT, "outputs": outputs,
              "detector": "nanodet"}
    output = run_board(board, files, config, timeout=900)
    check_common(output, list(models), {"int8": CHAIN_TOL, "int8c": CHAIN_TOL})
    for model, want in expected.items():
        got = [[float(v) for v in row[2:7]] + [int(row[7])] for row in lines(output, "object") if row[0] == model]
        close_to(got, want, 0.95, 1e-3, model)
        close_to(got, fp32_objects, CHAIN_IOU, CHAIN_SCORE, f"{model} against fp32")


def mnist_int8_files(folder: Path, chain: bool = False) -> tuple[dict[str, bytes], list[list[str]]]:
    """MNIST in int8 (chain: and int8 between layers, "int8c"), the ten digits as inputs and
    the int8 model's outputs in the wheel (int8c: on the desktop's kernels): the board's
    files, and the top-1s (model, digit, top-1)."""
    models = {"int8": mnist_int8(folder)}
    if chain:
        models["int8c"] = mnist_int8(folder, chain=True)
    files, want = {}, []
    for model, (param, weights) in models.items():
        files[f"{model}.param"], files[f"{model}.bin"] = param.read_bytes(), weights.read_bytes()
        for n, x in enumerate(mnist_digits()):
            files[f"in{n}.f32"] = x.tobytes()
            reference = kernels_outputs if model == "int8c" else wheel_outputs
            out = reference(param, weights, "data", ["fc"], x)["fc"]
            files[f"ref_{model}_{n}_fc.f32"] = padded(out)
            want.append([model, str(n), str(int(out.argmax()))])
    return files, want


def run_mnist_int8(board: QemuBoard, files: dict[str, bytes], want: list[list[str]]) -> None:
    models = list(dict.fromkeys(w[0] for w in want))
    config = {"models": models, "images": 10, "size": [28, 28, 1], "input": "data", "outputs": ["fc"],
              "detector": "classifier"}
    output = run_board(board, files, config)
    check_common(output, models, {"int8": INT8_TOL, "int8c": CHAIN_TOL})
    assert lines(output, "top1") == want
    assert [w[2] for w in want] == [str(d) for _ in models for d in range(10)]  # every digit still read right
    assert re.search(r"^cost int8 0 \d+ \d+$", output, re.M)


def test_mnist_int8_on_the_board(board: QemuBoard, tmp_path: Path) -> None:
    files, want = mnist_int8_files(tmp_path, chain=True)
    run_mnist_int8(board, files, want)


OOM_SCRIPT = b"""
import ncnn_mp, qemu_board
net = ncnn_mp.Net()
net.load_param(ncnn_mp.DataReader(from_memory=b"7767517\\n2 2\\nInput data 0 1 data\\nConvolution c 1 1 data out 0=64 1=3 4=1 6=576\\n"))
net.load_model(ncnn_mp.DataReader(zeros=True))
for side in (512, 16, 512, 16):  # 64 MiB of output, then 64 KiB: the board has 3.4 MiB
    x = ncnn_mp.Mat(side, side, 1)
    x.fill(1.0)
    try:
        with net.create_extractor() as ex:
            ex.input("data", x)
            print(side, "channels", ex.extract("out").c)
    except MemoryError as e:
        print(side, "MemoryError:", e)
big = ncnn_mp.Net()  # SqueezeNet's fp16 weights widen to 4.9 MB of fp32: more than the board has
big.load_param(ncnn_mp.DataReader(from_memory=open("/rom/squeezenet.param", "rb").read()))
try:
    big.load_model(open("/rom/squeezenet.bin", "rb"), copy=False)
except ValueError as e:
    print("load failed:", e)
big.close()
print("small again", net.create_extractor().extract is not None)
"""


def test_out_of_memory_on_the_board(board: QemuBoard, tmp_path: Path) -> None:
    """ncnn's C heap running out (an extract or a load too big for the board) ends in a Python
    exception, the board says why, and the net and the board work on."""
    real = shared_models("real", "squeezenet_v1.1.param", "squeezenet_v1.1.bin")
    image = tmp_path / "romfs.img"
    image.write_bytes(pack({"squeezenet.param": (real / "squeezenet_v1.1.param").read_bytes(),
                            "squeezenet.bin": (real / "squeezenet_v1.1.bin").read_bytes()}))
    from ci.qemu import run_script

    r = run_script(board.profile, board.binary, OOM_SCRIPT, timeout=120, romfs=image)
    assert r.returncode == 0, r.output
    out = r.output
    exhausted = re.findall(r"^board: the C heap \(ncnn's memory\) is exhausted: \d+ bytes asked", out, re.M)
    assert len(exhausted) >= 3, out
    assert out.count("512 MemoryError: Extractor.extract: ncnn ran out of memory for the blobs") == 2, out
    assert out.count("16 channels 64") == 2, out
    # (the layer whose weights did not fit the heap is named: squeezenet's convolutions are wrapped)
    assert re.search(r"^load failed: Net\.load_model: layer '[^']+' \(Convolution\) could not load its weights "
                     r"\(error -100;", out, re.M), out
    assert "small again True" in out, out


TIMER_WRAP_SCRIPT = b"""
import qemu_board
t = qemu_board.time_ns
def burn(n):
    for _ in range(n):
        pass
deltas, across, last = [], None, t()
while last < (1 << 32) + 50000000:
    burn(1000)
    now = t()
    if last < (1 << 32) <= now:
        across = now - last
    else:
        deltas.append(now - last)
    last = now
print("monotonic", min(deltas) > 0)
print("across", across)
print("others", min(deltas), max(deltas), len(deltas))
"""


def test_xtensa_timer_past_2_32() -> None:
    """The Xtensa board's timer (the ICOUNT register, 32 bits, its wraps carried by a debug
    exception: ci/xtensa/port/startup.S) goes on past 2^32 instructions: the board once took
    that exception for ever there (the soak test and fp32 RetinaFace hung). The 1,000-pass
    loop that spans the wrap costs what the others cost."""
    from ci.qemu import run_script

    board = QemuBoard("xtensa")
    r = run_script(board.profile, board.binary, TIMER_WRAP_SCRIPT, timeout=120, icount=True)
    assert r.returncode == 0, r.output
    across = int(lines(r.output, "across")[0][0])
    low, high, count = (int(v) for v in lines(r.output, "others")[0])
    assert lines(r.output, "monotonic") == [["True"]], r.output
    assert count > 10000 and low <= across <= high, r.output

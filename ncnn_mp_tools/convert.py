# SPDX-License-Identifier: MIT
"""`ncnn-mp model` (`make model`): a model from ONNX (or ncnn's .param/.bin) to a board, in one command.

    ncnn-mp model --dist DIST --board qemu net.onnx --images photos/ [--shape 1,3,32,32] [--out DIR]
               [--pixels rgb|bgr|gray] [--mean 0,0,0] [--norm 0.00392157] [--no-chain] [--int8-outputs]
    make model PROFILE=qemu MODEL=net.onnx IMAGES=photos/ [SHAPE=1,3,32,32] [OUT=build/model/net]
               [PIXELS=rgb|bgr|gray] [MEAN=0,0,0] [NORM=0.00392157] [CHAIN=0] [INT8_OUTPUTS=1]

Writes into OUT (default: NAME in the current folder, build/model/NAME in a checkout; NAME the
model's file name without its suffix):
  NAME.param, NAME.bin           fp32: pnnx (ci/pins.toml) converts the ONNX file with fp32 weights
                                 (fp16=0: what ncnn computes with, so copy=False leaves them in flash);
                                 an ncnn model given instead is copied, fp16 weights widened to fp32
  NAME-int8.param, NAME-int8.bin ncnn_mp_tools.quantize_int8 calibrated on the images, activations
                                 int8 between int8 layers (--chain; CHAIN=0: plain int8;
                                 INT8_OUTPUTS=1: outputs int8 too, Net.output_int8_scale)
  inputs.npy                     the images as the model's inputs, N x C x H x W: resized (bilinear)
                                 to the input's W x H, in PIXELS order, then (x - MEAN) * NORM, which is
                                 what Mat.from_pixels_resize and substract_mean_normalize do on a board
  input.f32                      the first of them as the board reads it (channels padded to cstep)
  romfs.img                      both models and input.f32 for the board's flash, mounted at /rom
  run_board.py                   loads both models from /rom, weights in place, and prints their
                                 outputs for input.f32: run it with the command the tool prints
  report.json                    what the steps measured
and reports each step:
  1. convert: the fp32 ncnn model in the CPython ncnn wheel against onnxruntime, on every input
     (the wheel with fp16 storage and packing off: what the board computes);
  2. int8: the int8 model on a desktop firmware with ncnn_mp's kernels (dist's unix-kernels, or
     profile memcheck in a checkout: what the boards compute; the wheel cannot run int8 between
     layers) against the fp32 one in the wheel: drift (max |diff| / max |fp32|) and, for a vector
     output, how often the top-1 agrees;
  3. preflight (ncnn_mp_tools/preflight.py) on the Unix firmware and on the board's firmware (in a
     checkout: sized to the two models): the layers, weights in place, memory, instructions;
  4. that firmware's path and the command that runs run_board.py on it.
The model has one input; SHAPE (N,C,H,W with N = 1, as ONNX orders it) is needed when the
ONNX input's dimensions are not all fixed, and for an ncnn model.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import numpy.typing as npt

from ncnn_mp_tools.device import PROBES, Targets
from ncnn_mp_tools.device import main as device_main
from ncnn_mp_tools.errors import fail, say
from ncnn_mp_tools.target import Target

F32 = npt.NDArray[np.float32]
# fp32 in the wheel against onnxruntime: beyond this the conversion is wrong, not rounding (seen: 4e-7).
CONVERSION_TOL = 1e-3
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".ppm", ".pgm", ".pnm", ".bmp")
# The wheel computes as a board does: fp32 throughout, no packed layouts.
EXACT_OPTIONS = ("use_fp16_storage", "use_fp16_packed", "use_fp16_arithmetic", "use_bf16_storage",
                 "use_packing_layout")


@dataclass
class Model:
    """An ncnn model in OUT: its files, its one input blob and shape (c, h, w), its outputs."""
    param: Path
    weights: Path
    input: str
    shape: tuple[int, int, int]
    outputs: list[str]


def parse_shape(text: str) -> tuple[int, int, int]:
    """SHAPE as N,C,H,W (or NxCxHxW; N = 1) or C,H,W: the (c, h, w) of one input."""
    try:
        dims = [int(v) for v in re.split(r"[,x\[\]\s]+", text.strip()) if v]
    except ValueError:
        dims = []
    if len(dims) == 4 and dims[0] == 1:
        dims = dims[1:]
    if len(dims) != 3 or min(dims) <= 0:
        fail(f"SHAPE={text} is not one input's N,C,H,W (N = 1) or C,H,W", "e.g. SHAPE=1,3,32,32")
    c, h, w = dims
    return c, h, w


def onnx_input(path: Path) -> tuple[str, list[int | str]]:
    """The ONNX model's one input (not an initializer): its name and declared dimensions."""
    import onnx

    try:
        graph = onnx.load(str(path), load_external_data=False).graph
    except Exception as e:  # (onnx raises DecodeError and others for a file that is not a model)
        fail(f"{path} is not an ONNX model ({e})", "give an .onnx file, or the model's ncnn .param and .bin")
    fed = {i.name for i in graph.initializer}
    inputs = [i for i in graph.input if i.name not in fed]
    if len(inputs) != 1:
        fail(f"{path} has {len(inputs)} inputs", "make model converts a model with one input (an image)")
    dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
            for d in inputs[0].type.tensor_type.shape.dim]
    return inputs[0].name, dims


def external_data(path: Path) -> set[str]:
    """The files (relative to the model) where an ONNX model keeps weights outside itself."""
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph
    return {e.value for t in graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL
            for e in t.external_data if e.key == "location"}


def pnnx_executable() -> Path:
    spec = importlib.util.find_spec("pnnx")  # (not imported: its Python side needs PyTorch)
    exe = Path(spec.submodule_search_locations[0]) / "pnnx" if spec and spec.submodule_search_locations else None
    if exe is None or not exe.is_file():
        fail("pnnx is not installed in this Python", "pip install pnnx (or, in a checkout, run in the test venv: $(python3 -m ci.tool venv))")
    return exe


def from_onnx(onnx_path: Path, shape: tuple[int, int, int], out: Path, stem: str) -> tuple[Path, Path]:
    """pnnx, in a scratch folder (it writes its own .pnnx.* and _pnnx.py files beside the model):
    OUT/NAME.param and .bin, fp32 weights."""
    c, h, w = shape
    param, weights = out / f"{stem}.param", out / f"{stem}.bin"
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "model.onnx"
        if external_data(onnx_path):  # (weights kept in files beside it: pnnx reads them as zeros)
            import onnx

            try:
                onnx.save(onnx.load(str(onnx_path)), str(model))  # one self-contained file
            except ValueError as e:  # (protobuf's 2 GiB limit)
                fail(f"{onnx_path} keeps its weights outside and does not fit one file ({e})",
                     "a model this large does not fit a board either")
        else:
            model.symlink_to(onnx_path)
        p = subprocess.run([str(pnnx_executable()), model.name, f"inputshape=[1,{c},{h},{w}]", "fp16=0"],
                           cwd=tmp, capture_output=True, text=True)
        made = Path(tmp) / "model.ncnn.param"
        if p.returncode != 0 or not made.is_file():
            print((p.stdout + p.stderr)[-3000:], file=sys.stderr)
            fail(f"pnnx could not convert {onnx_path}", "its output is above: an operator pnnx or ncnn lacks?")
        shutil.move(made, param)
        shutil.move(Path(tmp) / "model.ncnn.bin", weights)
    return param, weights


def from_ncnn(param_in: Path, out: Path, stem: str) -> tuple[Path, Path]:
    """An ncnn model copied into OUT with its weights as fp32 (fp16 ones widened)."""
    from ncnn_mp_tools.preflight import model_pairs
    from ncnn_mp_tools.quantize_int8 import QuantizeError, float_files

    (param, weights), = model_pairs([param_in])
    out_param, out_weights = out / f"{stem}.param", out / f"{stem}.bin"
    try:
        float_files(param, weights, out_param, out_weights, "fp32")
    except QuantizeError as e:
        fail(f"reading {param} failed: {e}", "give a text .param and its .bin (ncnn's converters write them)")
    return out_param, out_weights


def describe(param: Path, weights: Path, shape: tuple[int, int, int]) -> Model:
    """The model's input blob (its one Input layer) and outputs, as the wheel loads it."""
    import ncnn

    net = ncnn.Net()
    if net.load_param(str(param)) != 0 or net.load_model(str(weights)) != 0:
        fail(f"the ncnn wheel cannot load {param}", "was it written by pnnx or ncnn's converters?")
    inputs = list(net.input_names())
    if len(inputs) != 1:
        fail(f"{param} has {len(inputs)} inputs", "make model converts a model with one input (an image)")
    return Model(param, weights, inputs[0], shape, sorted(net.output_names(), key=_natural))


def _natural(name: str) -> list[object]:
    """out2 before out10 (pnnx numbers the outputs in the ONNX model's order)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def read_images(source: Path, shape: tuple[int, int, int], pixels: str, mean: list[float],
                norm: list[float]) -> F32:
    """The images in a folder (or a .npy of inputs, N x C x H x W) as the model's inputs."""
    c, h, w = shape
    if source.suffix == ".npy":
        x: F32 = np.ascontiguousarray(np.load(source), dtype=np.float32)
        if x.ndim != 4 or x.shape[1:] != (c, h, w):
            fail(f"{source} holds inputs of shape {x.shape}", f"N x {c} x {h} x {w} (N, C, H, W)")
        return x
    if not source.is_dir():
        fail(f"IMAGES={source} is neither a folder of images nor a .npy", "give a folder of a few typical images")
    files = sorted(p for p in source.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        fail(f"{source} has no images ({', '.join(IMAGE_SUFFIXES)})", "put a few typical inputs there")
    if (c == 1) != (pixels == "gray"):
        fail(f"PIXELS={pixels} for an input of {c} channel(s)", "gray for 1 channel, rgb or bgr for 3")
    from PIL import Image

    out = []
    for f in files:
        with Image.open(f) as im:
            px = resize_bilinear(np.asarray(im.convert("L" if pixels == "gray" else "RGB"), dtype=np.float32), w, h)
        chw = px[None] if px.ndim == 2 else px.transpose(2, 0, 1)[::-1 if pixels == "bgr" else 1]
        out.append((chw - np.array(mean, np.float32)[:, None, None]) * np.array(norm, np.float32)[:, None, None])
    return np.ascontiguousarray(np.stack(out), dtype=np.float32)


def resize_bilinear(img: F32, w: int, h: int) -> F32:
    """An H x W (x C) image resized as ncnn's from_pixels_resize does: each output pixel from the
    four source pixels around its centre (half-pixel centres, edges clamped), no smoothing when it
    shrinks (Pillow's and OpenCV's area filters would give inputs the board never sees)."""
    def taps(n_in: int, n_out: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], F32]:
        pos = np.clip((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0, n_in - 1).astype(np.float32)
        lo = np.floor(pos).astype(np.intp)
        return lo, np.minimum(lo + 1, n_in - 1), pos - lo

    y0, y1, fy = taps(img.shape[0], h)
    x0, x1, fx = taps(img.shape[1], w)
    if img.ndim == 3:
        fx = fx[:, None]
    top = img[y0][:, x0] * (1 - fx) + img[y0][:, x1] * fx
    bottom = img[y1][:, x0] * (1 - fx) + img[y1][:, x1] * fx
    wy = fy[:, None, None] if img.ndim == 3 else fy[:, None]
    return (top * (1 - wy) + bottom * wy).astype(np.float32)


def _per_channel(text: str, c: int, what: str) -> list[float]:
    """MEAN or NORM: one number for every channel, or one a channel; a number may be a fraction (1/255)."""
    try:
        values = [float(top) / float(bottom or 1) for top, _, bottom in (v.partition("/") for v in text.split(","))]
    except (ValueError, ZeroDivisionError):
        fail(f"{what}={text} is not a list of numbers", f"e.g. {what}=0 or {what}=1/255,1/255,1/255")
    if len(values) == 1:
        return values * c
    if len(values) != c:
        fail(f"{what} has {len(values)} values for {c} channels", f"give one value, or {c}")
    return values


def wheel_outputs(model: Model, x: F32) -> list[F32]:
    """The model's outputs in the CPython ncnn wheel (1 thread, fp32, no packing), flattened."""
    import ncnn

    from ncnn_mp_tools.quantize_int8 import wheel_mat

    net = ncnn.Net()
    net.opt.num_threads = 1
    for option in EXACT_OPTIONS:
        setattr(net.opt, option, False)
    net.load_param(str(model.param))
    net.load_model(str(model.weights))
    ex = net.create_extractor()
    ex.input(model.input, wheel_mat(ncnn, x))
    outs = []
    for name in model.outputs:
        ret, mat = ex.extract(name)
        if ret != 0:
            fail(f"the wheel could not extract {name} from {model.param} ({ret})", "see ncnn's message above")
        outs.append(np.array(mat, dtype=np.float32).reshape(-1))
    return outs


def kernels_outputs(model: Model, inputs: F32, firmware: Path) -> list[list[F32]]:
    """The model's outputs for each input (N x C x H x W) on a desktop firmware with ncnn_mp's
    kernels (run natively), channel by channel (C x H*W): int8 as the boards compute it, and the
    one desktop that runs int8 between layers (the wheel's x86 layers cannot: docs/models.md,
    "int8 between layers")."""
    c, h, w = model.shape
    with tempfile.TemporaryDirectory() as tmp:
        np.ascontiguousarray(inputs, dtype=np.float32).tofile(Path(tmp) / "in.f32")
        p = subprocess.run([str(firmware), str(PROBES / "run_net.py"), str(model.param), str(model.weights), model.input,
                            str(w), str(h), str(c), str(Path(tmp) / "in.f32"), tmp, *model.outputs],
                           capture_output=True, text=True, timeout=3600)
        if p.returncode != 0:
            print((p.stdout + p.stderr)[-3000:], file=sys.stderr)
            fail(f"the desktop firmware with ncnn_mp's kernels could not run {model.param.name}", "its output is above")
        channels = {line.split()[1]: int(line.split()[4]) for line in p.stdout.splitlines() if line.startswith("shape ")}
        return [[np.fromfile(Path(tmp) / f"{k}_{name}.f32", dtype=np.float32).reshape(channels[name], -1)
                 for name in model.outputs] for k in range(len(inputs))]


def onnx_outputs(onnx_path: Path, name: str, x: F32) -> list[F32]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    session = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
    return [np.asarray(y, dtype=np.float32).reshape(-1) for y in session.run(None, {name: x[None]})]


def drift(got: list[list[F32]], want: list[list[F32]]) -> dict[str, float]:
    """Over every input and output: the largest |got - want|, that over the largest |want|, and
    (for a vector output) the share of inputs whose top-1 agrees."""
    max_abs = max(float(np.abs(g.reshape(-1) - r.reshape(-1)).max()) for gs, rs in zip(got, want) for g, r in zip(gs, rs))
    scale = max(float(np.abs(r).max()) for rs in want for r in rs)
    top1 = [int(np.argmax(g)) == int(np.argmax(r)) for gs, rs in zip(got, want) for g, r in zip(gs, rs) if r.size > 1]
    return {"max_abs": max_abs, "relative": max_abs / max(scale, 1e-30), "max_ref": scale,
            "top1_agree": sum(top1) / len(top1) if top1 else float("nan")}


RUN_BOARD = '''\
# Made by ncnn_mp_tools.convert: {name}'s int8 and fp32 models on the board, weights in place
# in its flash (/rom), on the input in /rom/input.f32. Run it with
#   {command}
import ncnn_mp

SHAPE = {shape}  # w, h, c
INPUT = {input!r}
OUTPUTS = {outputs!r}


def dense(m, scale):
    """The Mat's values without the padding between channels (an int8 output's as q / scale)."""
    mv, per = memoryview(m), m.w * m.h * m.d
    values = [mv[ch * m.cstep + i] for ch in range(m.c) for i in range(per)]
    return values if scale is None else [(v - 256 if v > 127 else v) / scale for v in values]


for model in ({name!r} + "-int8", {name!r}):
    net = ncnn_mp.Net()
    net.opt.num_threads = 1
    net.load_param(open("/rom/" + model + ".param", "rb").read())
    net.load_model(memoryview(open("/rom/" + model + ".bin", "rb")), copy=False)  # the weights stay in flash
    print(model, "weights:", net.weights_info())
    x = ncnn_mp.Mat(*SHAPE, data=memoryview(open("/rom/input.f32", "rb")))
    with net.create_extractor() as ex:
        ex.input(INPUT, x)
        for name in OUTPUTS:
            print(model, name, " ".join("%.6g" % v for v in dense(ex.extract(name), net.output_int8_scale(name))))
    net.clear()
'''


def run_command(target: Target, romfs: Path, script: Path, models: str | None) -> str:
    """The command that runs a script on the target with the ROMFS image: `make run` with the
    models the checkout's firmware is sized to (`models`), else ncnn-mp's."""
    if models is not None:
        return f'make run PROFILE={target.name} MODELS="{models}" ROMFS={romfs} SCRIPT={script}'
    return f"ncnn-mp run --firmware {target.firmware} --romfs {romfs} {script}"


def convert(targets: Targets, argv: list[str], sized: Callable[[list[Path]], Targets] | None = None,
            default_out: Path | None = None) -> int:
    """sized (a checkout's build): the targets sized to the models once they are made; default_out:
    where OUT defaults to (NAME below it; the current folder if None)."""
    ap = argparse.ArgumentParser(prog="ncnn-mp model")
    ap.add_argument("model", type=Path, help="an .onnx file, or an ncnn .param (its .bin beside it)")
    ap.add_argument("--images", type=Path, required=True, help="a folder of calibration images, or a .npy of inputs")
    ap.add_argument("--shape", help="the input's N,C,H,W (N = 1)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--pixels", choices=("rgb", "bgr", "gray"), default=None)
    ap.add_argument("--mean", default="0", help="per channel, comma-separated (one value: every channel)")
    ap.add_argument("--norm", default="1/255", help="per channel, comma-separated")
    ap.add_argument("--no-chain", action="store_true", help="plain int8: fp32 between layers")
    ap.add_argument("--int8-outputs", action="store_true",
                    help="outputs an int8 chain reaches stay int8 (Net.output_int8_scale): a quarter of their RAM")
    args = ap.parse_args(argv)
    if targets.target.board is None:
        fail(f"ncnn-mp model puts the model on a board, and {targets.target.label} is not one",
             "give a board: --board qemu (or rv32, qemu-m4f, xtensa); PROFILE=qemu in a checkout")
    source = args.model.resolve()
    if not source.is_file():
        fail(f"MODEL={args.model} does not exist", "give the path of an .onnx file or an ncnn .param")
    stem = source.name.removesuffix(".onnx").removesuffix(".param").removesuffix(".ncnn")
    out = (args.out or (default_out or Path.cwd()) / stem).resolve()
    is_onnx = source.suffix == ".onnx"
    report: dict[str, Any] = {"model": str(source), "profile": targets.target.name}

    if is_onnx:
        onnx_name, dims = onnx_input(source)
        fixed = [int(d) for d in dims] if all(isinstance(d, int) and d > 0 for d in dims) else None
        if args.shape is None and fixed is None:
            fail(f"{source.name}'s input {onnx_name} has open dimensions {dims}", "give SHAPE=1,C,H,W")
        shape = parse_shape(args.shape or ",".join(map(str, fixed or [])))
    elif args.shape is None:
        fail("an ncnn model's input shape is not in its .param", "give SHAPE=1,C,H,W")
    else:
        shape = parse_shape(args.shape)
    c, h, w = shape
    pixels = args.pixels or ("gray" if c == 1 else "rgb")
    mean, norm = _per_channel(args.mean, c, "MEAN"), _per_channel(args.norm, c, "NORM")
    inputs = read_images(args.images.resolve(), shape, pixels, mean, norm)

    out.mkdir(parents=True, exist_ok=True)
    if is_onnx:
        say(f"1. converting {source.name} with pnnx (input {onnx_name}, 1x{c}x{h}x{w}, fp32)")
        param, weights = from_onnx(source, shape, out, stem)
    else:
        say(f"1. taking {source.name} (weights as fp32)")
        param, weights = from_ncnn(source, out, stem)
    model = describe(param, weights, shape)
    np.save(out / "inputs.npy", inputs)
    print(f"   {param.name}, {weights.name} ({weights.stat().st_size:,} bytes); input {model.input} {w}x{h}x{c}, "
          f"outputs {', '.join(model.outputs)}; {len(inputs)} inputs from {args.images} ({pixels}, mean {mean}, "
          f"norm {norm})")
    fp32 = [wheel_outputs(model, x) for x in inputs]
    if is_onnx:
        d = drift(fp32, [onnx_outputs(source, onnx_name, x) for x in inputs])
        report["wheel_vs_onnxruntime"] = d
        print(f"   the wheel against onnxruntime {version('onnxruntime')}: max |diff| {d['max_abs']:.3g}, "
              f"relative {d['relative']:.3g}" + _top1(d))
        if not d["relative"] <= CONVERSION_TOL:
            fail(f"the converted model computes otherwise than the ONNX model (relative difference {d['relative']:.3g}, "
                 f"more than {CONVERSION_TOL:g})", "an operator pnnx converts differently: compare layer by layer "
                 "with make compare against your own reference, or report it to pnnx")

    from ncnn_mp_tools.quantize_int8 import QuantizeError, quantize_files

    say(f"2. int8 ({'plain' if args.no_chain else 'int8 between layers'}), calibrated on the {len(inputs)} inputs")
    int8 = Model(out / f"{stem}-int8.param", out / f"{stem}-int8.bin", model.input, shape, model.outputs)
    try:
        summary = quantize_files(param, weights, int8.param, int8.weights, list(inputs), chain=not args.no_chain,
                                 int8_outputs=args.int8_outputs and not args.no_chain)
    except QuantizeError as e:
        fail(f"quantizing {param.name} failed: {e}", "keep the model fp32, or --skip the layer (quantize_int8)")
    print(f"   {len(summary.int8)} layers int8; .bin {summary.bin_bytes[0]:,} -> {summary.bin_bytes[1]:,} bytes")
    host = targets.host(True)
    if host is None:
        fail("no Unix firmware with ncnn_mp's kernels to check the int8 model on",
             "give dist's folder (--dist: its unix-kernels firmware), or a firmware built with NCNN_MP_KERNELS=1")
    d = drift(kernels_outputs(int8, inputs, host.firmware), fp32)
    report["int8_vs_fp32"] = d
    print(f"   int8 on the desktop firmware with ncnn_mp's kernels (as the boards compute it) against fp32: "
          f"max |diff| {d['max_abs']:.3g}, relative {d['relative']:.3g}" + _top1(d))

    from ncnn_mp_tools.compare import padded

    (out / "input.f32").write_bytes(padded(inputs[0]))  # (as a Mat holds it: channels padded to cstep)
    from ncnn_mp_tools.romfs_pack import pack

    files = {p.name: p.read_bytes() for p in (int8.param, int8.weights, param, weights, out / "input.f32")}
    (out / "romfs.img").write_bytes(pack(files))
    board = sized([param, int8.param]) if sized is not None else targets
    command = run_command(board.target, out / "romfs.img", out / "run_board.py",
                          f"{int8.param} {param}" if sized is not None else None)
    (out / "run_board.py").write_text(RUN_BOARD.format(name=stem, command=command, shape=(w, h, c),
                                                       input=model.input, outputs=model.outputs))

    say(f"3. preflight on {board.target.label}")
    from ncnn_mp_tools.preflight import preflight

    preflight_rc = preflight(board, [str(param), str(weights), str(int8.param), str(int8.weights),
                                     f"{model.input}={w}x{h}x{c}"])
    firmware = board.target.firmware
    report.update(firmware=str(firmware), romfs=str(out / "romfs.img"), run=command, preflight_ok=preflight_rc == 0)
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    say(f"4. {board.target.label}: {firmware}")
    print(f"   {out}: {', '.join(sorted(p.name for p in out.iterdir()))}")
    print(f"   on the board: {command}")
    return preflight_rc


def version(package: str) -> str:
    from importlib.metadata import version as installed

    return installed(package)


def _top1(d: dict[str, float]) -> str:
    return "" if np.isnan(d["top1_agree"]) else f"; top-1 agrees on {d['top1_agree']:.0%} of the inputs"


if __name__ == "__main__":
    sys.exit(device_main("model", convert, sys.argv[1:]))

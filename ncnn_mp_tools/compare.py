# SPDX-License-Identifier: MIT
"""`ncnn-mp compare` (`make compare`): a model on the firmware against the CPython ncnn wheel, blob by blob.

The same input to both sides, every blob compared; names the first layer whose output
drifts beyond a tolerance.

    ncnn-mp compare --dist DIST --board unix|qemu|rv32 m.param [m.bin] [data=WxHxC]
                 [--input x.npy] [--tol 1e-3] [--limit n] [--device-model d.param d.bin]
    make compare PROFILE=unix|qemu|rv32 MODELS="m.param [m.bin]" [SHAPES="data=WxHxC"]
                 [INPUT=x.npy|x.f32|photo.ppm] [TOL=1e-3] [LIMIT=n] [DEVICE_MODELS="d.param d.bin"] [SIZED=1]

The device (the Unix firmware, or a QEMU board with the model and the input in its ROMFS,
weights in place; in a checkout, the profile's firmware sized to the model when the profile
lacks a layer it needs, or with SIZED=1) extracts every blob in the net's order through one Extractor
(probes/compare_probe.py) and sends each back as float32; the wheel (1 thread, its default
options) does the same on the host. Per blob: the shapes, the largest absolute difference
and that difference relative to the blob's largest |value| in the wheel (the drift). A blob
drifts when its relative difference exceeds TOL; the first layer (in the param's order)
whose output drifts is named, with the element where it is worst and its inputs' drift.
Exit status 0: every blob within TOL; 1: a drift, a shape or blob that differs, or a device
that failed.

Input: seeded pseudo-random floats in [0, 1) (--seed; the same bytes to both sides), or
INPUT: a .npy or raw little-endian float32 file of C*H*W values (channel by channel), or a
binary PPM/PGM photo resized by the wheel to the input's shape (pixel values 0..255, RGB or
grey, no normalisation). LIMIT caps the floats one blob sends (every k-th element beyond it;
default all on Unix, 16384 on a board, whose UART carries about 250 KB of floats a second).
DEVICE_MODELS runs another model on the device than on the host (an int8 copy against the
fp32 original, a model you changed): blobs are matched by name. Text params only, and
firmwares with NCNN_STRING (not the *-nostring profiles): blobs are found by name.
"""

from __future__ import annotations

import argparse
import base64
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ncnn_mp_tools.device import PROBES, Targets, run_probe
from ncnn_mp_tools.device import main as device_main
from ncnn_mp_tools.errors import fail, say
from ncnn_mp_tools.preflight import MAGIC, lacking, model_inputs, model_pairs, split_args

F32 = npt.NDArray[np.float32]
BOARD_LIMIT = 16384


@dataclass
class Blob:
    """One blob as a side computed it: its shape (dims, w, h, d, c) and its dense float32
    values (every `step`-th one when the device sent a sample)."""
    name: str
    shape: tuple[int, ...]
    values: F32
    step: int = 1


@dataclass
class Layer:
    name: str
    type: str
    bottoms: list[str]
    tops: list[str]


def graph(param: Path) -> list[Layer]:
    """The layers of a text param, in order, with their blobs' names."""
    layers = []
    for line in param.read_text().split("\n")[2:]:
        f = line.split()
        if not f:
            continue
        nb, nt = int(f[2]), int(f[3])
        layers.append(Layer(f[1], f[0], f[4:4 + nb], f[4 + nb:4 + nb + nt]))
    return layers


def read_input(path: Path, w: int, h: int, c: int) -> F32:
    """INPUT as a (c, h, w) float32 array."""
    import ncnn

    if path.suffix in (".ppm", ".pgm", ".pnm"):
        data = path.read_bytes()
        fields = data.split(maxsplit=4)  # magic, width, height, maxval, pixels (one whitespace byte before them)
        magic, pw, ph = fields[0], int(fields[1]), int(fields[2])
        pixels = data[len(data) - pw * ph * (3 if magic == b"P6" else 1):]
        kinds = {(b"P6", 3): ncnn.Mat.PixelType.PIXEL_RGB, (b"P5", 1): ncnn.Mat.PixelType.PIXEL_GRAY,
                 (b"P6", 1): ncnn.Mat.PixelType.PIXEL_RGB2GRAY}
        if (magic, c) not in kinds or int(fields[3]) != 255:
            fail(f"{path}: a {magic.decode(errors='replace')} picture for an input of {c} channels",
                 "give a binary 8-bit PPM (P6) for 3 channels, PGM (P5) or PPM for 1, or a .npy")
        m = ncnn.Mat.from_pixels_resize(pixels, kinds[magic, c], pw, ph, w, h)
        return np.array(m, dtype=np.float32).reshape(c, h, w)
    values = np.load(path) if path.suffix == ".npy" else np.fromfile(path, dtype="<f4")
    if values.size != w * h * c:
        fail(f"{path}: {values.size} values for an input of {w}x{h}x{c}", f"give {w * h * c} float32 values (C, H, W)")
    return np.ascontiguousarray(values, dtype=np.float32).reshape(c, h, w)


def padded(x: F32) -> bytes:
    """A (c, h, w) array as a 3-D Mat's bytes: each channel padded to 16 bytes, as ncnn lays it out."""
    per = x.shape[1] * x.shape[2]
    out = np.zeros((x.shape[0], -(-per * 4 // 16) * 4), dtype=np.float32)
    out[:, :per] = x.reshape(x.shape[0], per)
    return out.tobytes()


def wheel_blobs(param: Path, weights: Path, inputs: dict[str, F32]) -> dict[str, Blob]:
    """Every blob of the model in the CPython wheel, extracted in order through one Extractor."""
    import ncnn

    net = ncnn.Net()
    net.opt.num_threads = 1
    if net.load_param(str(param)) != 0 or net.load_model(str(weights)) != 0:
        fail(f"the wheel could not load {param.name} / {weights.name}", "check the files (custom layers are not supported)")
    out: dict[str, Blob] = {}
    ex = net.create_extractor()
    for name, x in inputs.items():
        ex.input(name, ncnn.Mat(x).clone())
    for layer in graph(param):
        for top in layer.tops:
            ret, m = ex.extract(top)
            if ret != 0:
                fail(f"the wheel could not compute blob {top} ({ret})", "is the model complete?")
            out[top] = Blob(top, (m.dims, m.w, m.h, m.d, m.c), np.array(m, dtype=np.float32).reshape(-1))
    return out


def parse_device(output: str) -> tuple[dict[str, Blob], str | None]:
    """The blobs the probe sent, and why it stopped early (None when it ran to its end)."""
    blobs: dict[str, Blob] = {}
    head: list[str] = []
    chunks: list[bytes] = []
    error = None
    for line in output.splitlines():
        line = line.strip()
        if line.startswith("@b "):
            head, chunks = line.split()[1:], []
        elif line.startswith("@d "):
            chunks.append(base64.b64decode(line[3:]))
        elif line.startswith("@e") and head:
            name, dims, w, h, d, c, elemsize, step = head[0], *(int(v) for v in head[1:])
            values = np.frombuffer(b"".join(chunks), dtype="<f4") if elemsize == 4 else np.zeros(0, np.float32)
            blobs[name] = Blob(name, (dims, w, h, d, c), values, step)
            head = []
        elif line.startswith("@x "):
            error = f"extracting {line.split()[1]} raised {line.split(None, 2)[2]}"
    return blobs, error


@dataclass
class Diff:
    max_ref: float  # the wheel's largest |value|
    max_abs: float  # the largest |device - wheel|
    rel: float  # max_abs / max_ref (max_abs when the blob is all zeros)
    worst: int  # the dense index of that element
    dev: float
    ref: float
    note: str = ""  # what keeps the blob from being compared, else ""


def diff(dev: Blob | None, ref: Blob) -> Diff:
    if dev is None:
        return Diff(0, 0, float("inf"), 0, 0, 0, "not computed on the device")
    if dev.shape != ref.shape:
        return Diff(0, 0, float("inf"), 0, 0, 0, f"shape {shape_text(dev.shape)} on the device")
    index = np.arange(0, ref.values.size, dev.step)
    if index.size != dev.values.size:
        return Diff(0, 0, float("inf"), 0, 0, 0, f"the device sent {dev.values.size} values, not {index.size}")
    max_ref = float(np.abs(ref.values).max()) if ref.values.size else 0.0
    if not index.size:
        return Diff(max_ref, 0, 0, 0, 0, 0)
    ref_at = ref.values[index]
    d = np.abs(dev.values.astype(np.float64) - ref_at)
    d[np.isnan(dev.values) != np.isnan(ref_at)] = np.inf  # (NaN on one side only; on both sides, no difference)
    d[np.isnan(dev.values) & np.isnan(ref_at)] = 0
    at = int(np.argmax(d))
    max_abs = float(d[at])
    rel = max_abs / max_ref if max_ref > 0 else max_abs
    return Diff(max_ref, max_abs, rel, int(index[at]), float(dev.values[at]), float(ref_at[at]))


def shape_text(shape: tuple[int, ...]) -> str:
    dims, w, h, d, c = shape
    return "x".join(str(v) for v in (w, h, d, c)[:{1: 1, 2: 2, 3: 2, 4: 3}.get(dims, 0)] + ((c,) if dims >= 3 else ()))


def position(shape: tuple[int, ...], i: int) -> str:
    """A dense index as ncnn's coordinates: [c, (z,) y, x]."""
    dims, w, h, d, c = shape
    names = {1: (w,), 2: (h, w), 3: (c, h, w), 4: (c, d, h, w)}.get(dims, (i + 1,))
    return "[" + ", ".join(str(int(v)) for v in np.unravel_index(i, names)) + "]"


def compare(targets: Targets, argv: list[str]) -> int:
    target = targets.target
    ap = argparse.ArgumentParser(prog="ncnn-mp compare")
    ap.add_argument("models", nargs="*")
    ap.add_argument("--input", type=Path)
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device-model", nargs="+", default=[])
    args = ap.parse_intermixed_args(argv)
    paths, shapes = split_args(args.models)
    pairs = model_pairs(paths)
    if len(pairs) != 1:
        fail("compare takes one model", "ncnn-mp compare ... model.param model.bin [data=WxHxC] "
             '(make compare MODELS="model.param model.bin" [SHAPES="data=WxHxC"])')
    param, weights = pairs[0]
    dev_param, dev_weights = model_pairs([Path(p).resolve() for p in args.device_model])[0] if args.device_model \
        else (param, weights)
    for p in (param, dev_param):
        if p.read_bytes()[:4] == MAGIC:
            fail(f"{p}: a binary param has no blob names to match", "give the text .param")
    inputs = model_inputs(param, shapes)
    if args.input and len(inputs) != 1:
        fail(f"INPUT given for a model with {len(inputs)} inputs", "leave INPUT out (seeded random inputs)")
    rng = np.random.default_rng(args.seed)
    arrays: dict[str, F32] = {}
    for name, (w, h, c) in inputs:
        arrays[str(name)] = (read_input(args.input.resolve(), w, h, c) if args.input
                             else rng.random((c, h, w), dtype=np.float32))
    files = {"m.param": dev_param.read_bytes(), "m.bin": dev_weights.read_bytes()}
    config_inputs = []
    for n, (name, x) in enumerate(arrays.items()):
        files[f"in{n}.f32"] = padded(x)
        config_inputs.append((name, (x.shape[2], x.shape[1], x.shape[0]), f"in{n}.f32"))
    if not target.names:
        fail(f"{target.label} has ncnn without NCNN_STRING: its nets know no blob names",
             "compare on a firmware with names (qemu, rv32, unix)")
    missing = lacking(target, [dev_param])
    if missing:
        fail(f"{target.label} lacks layers the model needs: {', '.join(missing)}",
             'build one sized to it in a checkout: make compare ... SIZED=1, or make firmware MODELS="..."')
    board = target.board is not None
    limit = args.limit if args.limit is not None else (BOARD_LIMIT if board else 0)
    import ncnn

    say(f"{dev_param.name} on {target.label} against {param.name} in the CPython ncnn wheel {ncnn.__version__}")
    ref = wheel_blobs(param, weights, arrays)
    output, ok = run_probe(target, PROBES / "compare_probe.py",
                           {"inputs": config_inputs, "limit": limit}, files, timeout=1800 if board else 600)
    dev, error = parse_device(output)
    if not ok and error is None:
        error = "the device failed:\n" + output[-1500:]
    what = f"{args.input.name}" if args.input else f"seeded random [0, 1) (seed {args.seed})"
    print(f"input {', '.join(f'{k} {x.shape[2]}x{x.shape[1]}x{x.shape[0]}' for k, x in arrays.items())}: {what}; "
          f"drift = max |device - wheel| / max |wheel| of the blob, tolerance {args.tol:g}")
    layers = graph(param)
    wl = min(36, max(len(x.name) for x in layers))
    wt = min(20, max(len(x.type) for x in layers))
    wb = min(36, max(len(t) for x in layers for t in x.tops))
    print(f"{'layer':<{wl}} {'type':<{wt}} {'blob':<{wb}} {'shape':<12} {'max|wheel|':>10} {'max abs diff':>12} "
          f"{'drift':>9}")
    first: tuple[Layer, str, Diff] | None = None
    diffs: dict[str, Diff] = {}
    sampled = 0
    for layer in layers:
        for top in layer.tops:
            if top not in dev and error is not None:
                break  # (the device stopped before it)
            r = diffs[top] = diff(dev.get(top), ref[top])
            sampled += top in dev and dev[top].step > 1
            mark = " <" if r.rel > args.tol and first is None else ""
            if r.rel > args.tol and first is None:
                first = (layer, top, r)
            shown = r.note if r.note else f"{r.max_ref:10.4g} {r.max_abs:12.4g} {r.rel:9.2e}"
            print(f"{layer.name[:wl]:<{wl}} {layer.type[:wt]:<{wt}} {top[:wb]:<{wb}} {shape_text(ref[top].shape):<12} "
                  f"{shown}{mark}")
    if sampled:
        print(f"({sampled} blob(s) larger than LIMIT={limit} floats compared on every k-th element only)")
    if error:
        print(f"the device stopped early: {error}")
    if not diffs:
        return 1
    worst = max(diffs, key=lambda b: diffs[b].rel)
    producer = {top: layer for layer in layers for top in layer.tops}
    added = {top: r.rel - max([diffs[b].rel for b in producer[top].bottoms if b in diffs] or [0.0])
             for top, r in diffs.items() if not r.note}
    if first is None:
        if error:
            return 1
        say(f"no drift: all {len(diffs)} blobs within {args.tol:g} (largest: {worst}, {diffs[worst].rel:.2e})")
        return 0
    print(f"largest drift: {diffs[worst].rel:.2e}, blob {worst} of layer {producer[worst].name} ({producer[worst].type})")
    if added:
        most = max(added, key=lambda b: added[b])
        print(f"most drift added by one layer: {producer[most].name} ({producer[most].type}), "
              f"its inputs {diffs[most].rel - added[most]:.2e}, its output {diffs[most].rel:.2e}")
    layer, top, r = first
    say(f"first drift: layer {layer.name} ({layer.type}), output blob {top}: "
        + (r.note if r.note else f"{r.rel:.3e} > {args.tol:g}"))
    if not r.note:
        print(f"  worst element {position(ref[top].shape, r.worst)}: device {r.dev:.7g}, wheel {r.ref:.7g} "
              f"(|diff| {r.max_abs:.4g}, the blob's max |wheel| {r.max_ref:.4g})")
    for bottom in layer.bottoms:
        b = diffs.get(bottom)
        print(f"  its input {bottom}: " + ("not compared" if b is None else b.note or f"drift {b.rel:.2e} (max abs diff "
                                            f"{b.max_abs:.4g})" + (" within tolerance" if b.rel <= args.tol else "")))
    return 1


if __name__ == "__main__":
    sys.exit(device_main("compare", compare, sys.argv[1:]))

# SPDX-License-Identifier: MIT
"""Quantize an ncnn model to int8 (or store its weights as fp16), for ncnn's int8 inference.

The ncnn source distribution ships no quantizer (no ncnn2table / ncnn2int8), so this is the
project's own, written from ncnn's sources (src/modelbin.cpp and the layers' load_model).
It reads an fp32 model (text .param + .bin) and writes a new .param/.bin pair:

- int8 (default): Convolution, ConvolutionDepthWise and InnerProduct, the layers whose int8
  forward exists in ncnn's generic C++ code, get int8 weights with per-output-channel
  scales 127/absmax (per group for ConvolutionDepthWise) and a bottom-blob scale from
  calibration: the fp32 model is run in the CPython `ncnn` wheel on sample inputs and the
  values of each quantized layer's input blob are collected (`maxabs`: 127/max|x|; `kl`:
  the clipping threshold whose 128-level histogram is closest to the original in
  KL divergence; `percentile`: 127 over the 99.99th percentile of the non-zero |x|).
  Layers reading the same data through Split share one blob and so one scale. maxabs is
  the default: on MNIST and SqueezeNet neither kl nor percentile did clearly better (kl
  lowered the mean score error a little; tests/test_quantize.py measures maxabs). Each
  quantized layer's .param line gains `8=2` (per-channel; `8=1` for depthwise, per group),
  which makes ncnn read, after the usual weights and bias:

      weight  tag 0x000D4B38 (uint32 LE), weight_data_size int8 values, zero-padded to 4 bytes
      bias    num_output float32 (only with 5=1 / 1=1, unchanged)
      scales  num_output float32 (ConvolutionDepthWise: group float32): weight scales
      scale   1 float32: the bottom blob's scale (x_int8 = round(x * scale), clamped to +-127)

  Every other layer stays fp32 and keeps its weights, in the order ncnn reads them. Run the
  result with `opt.use_int8_inference` on (ncnn's default).
- int8 between layers (`--chain`, `chain=True`): where int8 layers write blobs that only
  int8 layers read, directly or through Split, Concat, Slice, ShuffleChannel, ReLU (no slope),
  max or average Pooling, Crop, Interp or Noop (`chains()`), the activation stays int8: each Convolution /
  ConvolutionDepthWise writing into such a group gets `8=` + 100 and one more float32 after
  its bottom scale, the output scale (ncnn's own format: its top_blob_int8_scales), and
  every layer reading the group takes the same scale as its input scale (the widest range
  of the group's blobs). A BinaryOp add or mul of two such groups writing into another gets
  their scales as params 20 and 21 and its output's as 22 (ncnn_mp's own: ncnn's BinaryOp
  reads params 0 to 2 only), and computes int8 from int8; an Eltwise of two inputs that is a
  plain sum or a product is written as that BinaryOp first (eltwise_as_binaryop).
  ncnn_mp's kernels requantize with an integer multiplier and shift
  per channel (ncnn_mp/kernels/kernels.h); a Net refuses at load a param that gives an int8 blob to
  a layer that cannot read it, so run such a model on a firmware built with
  NCNN_MP_KERNELS=1 (the boards; ncnn's own x86 and generic Concat, ReLU and Pooling read
  int8 as floats). The result is an ordinary ncnn int8 model otherwise.
- fp16 (`--fp16` / `convert_fp16`): every weight ncnn reads as tagged data (ModelBin::load
  type 0: the weights of the convolutions, deconvolutions and InnerProduct) is written with
  tag 0x01306B47 as IEEE half floats, zero-padded to 4 bytes; ncnn converts it back to fp32
  when it loads the model, so this saves flash, not RAM. Untagged data (type 1: biases,
  BatchNorm/Scale/PReLU/norm parameters, MemoryData) stays fp32: ncnn has no other form for it.
- fp32 (`--fp32` / `convert_fp32`): the other way, for a model published with fp16 weights
  (NanoDet-m): twice the flash, but weights ncnn can use in place (Net.load_model(copy=False))
  instead of converting them into RAM.

What it cannot do, it refuses before writing anything, naming the layer: a layer type whose
weight layout it does not know (a custom layer: declare it with --layout), a model already
quantized, a .bin that does not match the .param (short, or with bytes left over).

Command line, from the checkout's root (numpy and the `ncnn` wheel, as in the project's venv:
`$(python3 -m ci.tool venv) -m ncnn_mp_tools.quantize_int8 ...`):

    python3 -m ncnn_mp_tools.quantize_int8 in.param in.bin out.param out.bin --calib samples.npy [--method kl] [--chain]
    python3 -m ncnn_mp_tools.quantize_int8 in.param in.bin out.param out.bin --fp16
    python3 -m ncnn_mp_tools.quantize_int8 in.param in.bin out.param out.bin --fp32

`samples.npy` holds N preprocessed inputs, shape (N, c, h, w), (N, h, w) or (N, w), float32,
exactly what the model's input blob is fed (pixels already scaled / mean-subtracted).
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
I8 = npt.NDArray[np.int8]

MAGIC = 7767517
TAG_FP32 = 0x00000000  # raw float32 (type 0 with a zero tag)
TAG_FP32_RAW = 0x0002C056  # raw float32 (another tag for the same)
TAG_FP16 = 0x01306B47
TAG_BF16 = 0x01348B83
TAG_INT8 = 0x000D4B38

METHODS = ("maxabs", "kl", "percentile")
HIST_BINS = 2048
PERCENTILE = 99.99


class QuantizeError(ValueError):
    """What the quantizer cannot do: raised before any file is written."""


# ---------------------------------------------------------------------------
# The model: its .param lines and every ModelBin::load of its .bin, in order.


@dataclass
class Load:
    """One `ModelBin::load(count, type)` call of a layer's load_model, in ncnn's order.

    type 0 is tagged data (weights: fp32, fp16, int8, ...), type 1 raw float32. `values`
    holds the data as float32 whatever its storage; `storage` is how it is stored ("fp32",
    "fp16", "int8"; as read also "bf16", "codebook"), `int8` the quantized values, and `raw`
    the bytes as read from the .bin: written back unchanged unless emptied."""

    role: str
    type: int
    values: F32
    storage: str = "fp32"
    int8: I8 | None = None
    raw: bytes = b""


@dataclass
class Layer:
    type: str
    name: str
    bottoms: list[str]
    tops: list[str]
    params: list[tuple[str, str]]  # (key, value) as written in the .param, in order
    loads: list[Load] = field(default_factory=list)

    def value(self, key: int) -> str | None:
        for k, v in self.params:
            if k == str(key):
                return v
        return None

    def get_int(self, key: int, default: int) -> int:
        text = self.value(key)
        if text is None:
            return default
        try:
            return int(text)
        except ValueError:
            try:
                return int(float(text))
            except ValueError:
                raise QuantizeError(f"layer {self.name!r} ({self.type}): parameter {key}={text} "
                                    f"is not a number") from None

    def get_float(self, key: int, default: float) -> float:
        text = self.value(key)
        if text is None:
            return default
        try:
            return float(text)
        except ValueError:
            raise QuantizeError(f"layer {self.name!r} ({self.type}): parameter {key}={text} "
                                f"is not a number") from None

    def where(self) -> str:
        return f"layer {self.name!r} ({self.type})"

    def line(self) -> str:
        params = " ".join(f"{k}={v}" for k, v in self.params)
        return " ".join([f"{self.type:<24} {self.name:<24} {len(self.bottoms)} {len(self.tops)}",
                         *self.bottoms, *self.tops, *([params] if params else [])])


@dataclass
class Model:
    layers: list[Layer]
    blob_count: int

    def param_text(self) -> str:
        return "\n".join([str(MAGIC), f"{len(self.layers)} {self.blob_count}",
                          *(layer.line() for layer in self.layers)]) + "\n"

    def bin_bytes(self) -> bytes:
        out: list[bytes] = []
        for layer in self.layers:
            for load in layer.loads:
                out.append(_encode(layer, load))
        return b"".join(out)

    def layer(self, name: str) -> Layer:
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise KeyError(name)


# What a layer type reads from the .bin: (role, load type, count), from its parameters.
LoadSpec = tuple[str, int, int]
Layout = Callable[[Layer], list[LoadSpec]]


def _weights_bias(dynamic_key: int | None) -> Layout:
    """Convolutions, deconvolutions, InnerProduct: weight_data_size (6, or 2 for
    InnerProduct) tagged, then num_output (0) floats of bias when bias_term (5, or 1)."""

    def layout(layer: Layer) -> list[LoadSpec]:
        if dynamic_key is not None and layer.get_int(dynamic_key, 0):
            return []  # dynamic_weight: the weights are a second input blob
        inner = layer.type == "InnerProduct"
        loads: list[LoadSpec] = [("weight", 0, layer.get_int(2 if inner else 6, 0))]
        if layer.get_int(1 if inner else 5, 0):
            loads.append(("bias", 1, layer.get_int(0, 0)))
        return loads

    return layout


def _floats(*parts: tuple[str, int, int]) -> Layout:
    """Type-1 data: each part (role, param id, default) is that many floats."""

    def layout(layer: Layer) -> list[LoadSpec]:
        return [(role, 1, layer.get_int(key, default)) for role, key, default in parts]

    return layout


def _affine(count_key: int, affine_key: int, roles: tuple[str, ...]) -> Layout:
    def layout(layer: Layer) -> list[LoadSpec]:
        if not layer.get_int(affine_key, 1):
            return []
        return [(role, 1, layer.get_int(count_key, 0)) for role in roles]

    return layout


def _scale(layer: Layer) -> list[LoadSpec]:
    size = layer.get_int(0, 0)
    if size == -233:
        return []  # the scales are a second input blob
    return [("scale", 1, size)] + ([("bias", 1, size)] if layer.get_int(1, 0) else [])


def _padding(layer: Layer) -> list[LoadSpec]:
    size = layer.get_int(6, 0)
    return [("per_channel_pad", 1, size)] if size else []


def _memorydata(layer: Layer) -> list[LoadSpec]:
    w, h, d, c = layer.get_int(0, 0), layer.get_int(1, 0), layer.get_int(11, 0), layer.get_int(2, 0)
    load_type = layer.get_int(21, 1)
    if load_type not in (0, 1):
        raise QuantizeError(f"{layer.where()}: MemoryData load type {load_type} is not supported")
    count = w * h * d * c if d else w * h * c if c else w * h if h else w
    return [("data", load_type, count)] if count else []


def _quantized(layout: Layout) -> Layout:
    """Convolution, ConvolutionDepthWise, InnerProduct: refuse a model already quantized."""

    def checked(layer: Layer) -> list[LoadSpec]:
        if layer.get_int(8, 0):
            raise QuantizeError(f"{layer.where()}: already quantized (int8_scale_term 8="
                                f"{layer.value(8)}): give the fp32 model")
        return layout(layer)

    return checked


# Layer types that read weights, with their layouts (from each layer's load_model in
# ncnn 1.0.20261020's src/layer/*.cpp).
LAYOUTS: dict[str, Layout] = {
    "Convolution": _quantized(_weights_bias(19)),
    "ConvolutionDepthWise": _quantized(_weights_bias(19)),
    "InnerProduct": _quantized(_weights_bias(None)),
    "Convolution1D": _weights_bias(19),
    "ConvolutionDepthWise1D": _weights_bias(19),
    "Convolution3D": _weights_bias(None),
    "ConvolutionDepthWise3D": _weights_bias(None),
    "Deconvolution": _weights_bias(28),
    "DeconvolutionDepthWise": _weights_bias(28),
    "Deconvolution1D": _weights_bias(28),
    "DeconvolutionDepthWise1D": _weights_bias(28),
    "Deconvolution3D": _weights_bias(None),
    "DeconvolutionDepthWise3D": _weights_bias(None),
    "DeformableConv2D": _weights_bias(None),
    "BatchNorm": _floats(("slope", 0, 0), ("mean", 0, 0), ("var", 0, 0), ("bias", 0, 0)),
    "Bias": _floats(("bias", 0, 0)),
    "PReLU": _floats(("slope", 0, 0)),
    "Normalize": _floats(("scale", 3, 0)),
    "Scale": _scale,
    "InstanceNorm": _affine(0, 2, ("gamma", "beta")),
    "GroupNorm": _affine(1, 3, ("gamma", "beta")),
    "LayerNorm": _affine(0, 2, ("gamma", "beta")),
    "RMSNorm": _affine(0, 2, ("gamma",)),
    "Padding": _padding,
    "MemoryData": _memorydata,
}

# ncnn's other built-in layer types: their load_model is Layer's, which reads nothing.
WEIGHTLESS = frozenset("""
AbsVal ArgMax BNLL Concat Crop Dropout Eltwise ELU Exp Flatten Input Log LRN MVN Pooling Power
Proposal Reduction ReLU Reshape ROIPooling Sigmoid Slice Softmax Split SPP TanH Threshold Tile
BinaryOp UnaryOp Squeeze ExpandDims Permute PriorBox DetectionOutput Interp ShuffleChannel Clip
Reorg YoloDetectionOutput Yolov3DetectionOutput PSROIPooling ROIAlign Packing Cast HardSigmoid
SELU HardSwish Noop PixelShuffle DeepCopy Mish StatisticsPooling Swish Softplus GELU Pooling1D
Pooling3D MatMul Einsum GLU Fold Unfold GridSample CumulativeSum CopyTo Erf Diag CELU Shrink Flip
Spectrogram InverseSpectrogram SDPA RotaryEmbed
""".split())

# Read weights in a layout this tool does not write back (refused, naming the layer).
REFUSED = {
    "Embed": "its int8 option and weights are not handled",
    "Gemm": "its constant A/B/C blobs are not handled",
    "RNN": "its weights are not handled", "LSTM": "its weights are not handled",
    "GRU": "its weights are not handled", "MultiHeadAttention": "its weights are not handled",
    "Quantize": "the model is already quantized", "Dequantize": "the model is already quantized",
    "Requantize": "the model is already quantized",
}


def parse_layout(spec: str) -> tuple[str, Layout]:
    """A --layout argument: TYPE=LOADS, LOADS a comma-separated list of T:N (T the ncnn load
    type, 0 tagged weights or 1 raw float32; N a count, or @ID for the value of parameter ID),
    empty for a weightless type. E.g. the digits demo's Python layer: Standardize=1:@0,1:@0."""
    name, sep, loads = spec.partition("=")
    if not sep or not name:
        raise QuantizeError(f"--layout {spec!r}: expected TYPE=T:N,... (or TYPE= for no weights)")
    items: list[tuple[int, str]] = []
    for item in filter(None, loads.split(",")):
        t, sep, n = item.partition(":")
        if not sep or t not in ("0", "1") or not (n.isdigit() or (n[:1] == "@" and n[1:].lstrip("-").isdigit())):
            raise QuantizeError(f"--layout {spec!r}: {item!r} is not T:N or T:@ID (T 0 or 1)")
        items.append((int(t), n))

    def layout(layer: Layer) -> list[LoadSpec]:
        return [(f"data{i}", t, layer.get_int(int(n[1:]), 0) if n[0] == "@" else int(n))
                for i, (t, n) in enumerate(items)]

    return name, layout


# ---------------------------------------------------------------------------
# Reading


def _split_params(tokens: list[str], where: str) -> list[tuple[str, str]]:
    params = []
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep or not key.lstrip("-").isdigit():
            raise QuantizeError(f"{where}: parameter {token!r} is not key=value")
        params.append((key, value))
    return params


def parse_param(text: str) -> tuple[list[Layer], int]:
    """The layers of a text .param (no weights yet) and its blob count."""
    lines = [ln.split() for ln in text.splitlines()]
    lines = [t for t in lines if t]
    if not lines or lines[0] != [str(MAGIC)]:
        raise QuantizeError(f"not a text ncnn .param (the first line must be {MAGIC}; "
                            f"binary .param.bin files are not read)")
    if len(lines) < 2 or len(lines[1]) != 2:
        raise QuantizeError(".param: the second line must be 'layer_count blob_count'")
    layer_count, blob_count = int(lines[1][0]), int(lines[1][1])
    if len(lines) - 2 != layer_count:
        raise QuantizeError(f".param says {layer_count} layers, has {len(lines) - 2}")
    layers = []
    for i, t in enumerate(lines[2:]):
        if len(t) < 4:
            raise QuantizeError(f".param layer line {i + 1} is too short: {' '.join(t)!r}")
        nb, nt = int(t[2]), int(t[3])
        if len(t) < 4 + nb + nt:
            raise QuantizeError(f".param layer {t[1]!r}: fewer blob names than {nb} + {nt}")
        where = f"layer {t[1]!r} ({t[0]})"
        layers.append(Layer(t[0], t[1], t[4:4 + nb], t[4 + nb:4 + nb + nt], _split_params(t[4 + nb + nt:], where)))
    return layers, blob_count


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int, layer: Layer, what: str) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise QuantizeError(f"{layer.where()}: the .bin ends at byte {len(self.data)}, its {what} "
                                f"needs {n} bytes from byte {self.pos}: the .bin does not match the .param")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk


def _align4(n: int) -> int:
    return (n + 3) & ~3


def _decode(reader: _Reader, layer: Layer, role: str, type_: int, count: int) -> Load:
    """What ModelBinFromDataReader::load(count, type) reads: the values as float32, how
    they were stored, and the bytes."""
    if count < 0:
        raise QuantizeError(f"{layer.where()}: negative size {count} for its {role}")
    start = reader.pos
    storage = "fp32"
    if type_ == 1:
        values = np.frombuffer(reader.take(4 * count, layer, role), dtype="<f4").astype(np.float32)
    else:
        (tag,) = struct.unpack("<I", reader.take(4, layer, role + " tag"))
        if tag in (TAG_FP32, TAG_FP32_RAW):
            values = np.frombuffer(reader.take(4 * count, layer, role), dtype="<f4").astype(np.float32)
        elif tag == TAG_FP16:
            raw = reader.take(_align4(2 * count), layer, role)
            values, storage = np.frombuffer(raw[:2 * count], dtype="<f2").astype(np.float32), "fp16"
        elif tag == TAG_BF16:
            raw = reader.take(_align4(2 * count), layer, role)
            bits = np.frombuffer(raw[:2 * count], dtype="<u2").astype(np.uint32) << 16
            values, storage = bits.view(np.float32).astype(np.float32), "bf16"
        elif tag == TAG_INT8:
            raise QuantizeError(f"{layer.where()}: its {role} is already int8: give the fp32 model")
        else:  # ncnn's rule: any other non-zero tag is a 256-entry codebook and uint8 indices
            table = np.frombuffer(reader.take(256 * 4, layer, role + " codebook"), dtype="<f4")
            index = np.frombuffer(reader.take(_align4(count), layer, role), dtype=np.uint8)[:count]
            values, storage = table[index].astype(np.float32), "codebook"
    return Load(role, type_, values, storage, raw=reader.data[start:reader.pos])


def read_model(param: str | Path, weights: str | Path,
               layouts: Mapping[str, Layout] | None = None) -> Model:
    """Parse a text .param and its .bin into a Model (every weight decoded to float32).
    `layouts` adds (or overrides) layer types, e.g. custom layers: see parse_layout."""
    layers, blob_count = parse_param(Path(param).read_text())
    extra = dict(layouts or {})
    table = dict(LAYOUTS, **extra)
    refused = [f"{layer.where()}: {REFUSED[layer.type]}" for layer in layers
               if layer.type in REFUSED and layer.type not in extra]
    unknown = [layer.where() for layer in layers
               if layer.type not in table and layer.type not in WEIGHTLESS and layer.type not in REFUSED]
    if refused:
        raise QuantizeError("cannot convert: " + "; ".join(refused))
    if unknown:
        raise QuantizeError("cannot convert: unknown layer type, weight layout not known: "
                            + ", ".join(unknown) + " (declare it with --layout TYPE=... / layouts=)")
    reader = _Reader(Path(weights).read_bytes())
    for layer in layers:
        specs = table[layer.type](layer) if layer.type in table else []
        layer.loads = [_decode(reader, layer, role, t, n) for role, t, n in specs]
    if reader.pos != len(reader.data):
        raise QuantizeError(f"the .bin has {len(reader.data) - reader.pos} bytes left over after the last "
                            f"layer's weights ({reader.pos} of {len(reader.data)} read): it does not match "
                            f"the .param")
    return model_check(Model(layers, blob_count))


def model_check(model: Model) -> Model:
    for layer in model.layers:
        for load in layer.loads:
            if not np.all(np.isfinite(load.values)):
                raise QuantizeError(f"{layer.where()}: its {load.role} holds inf or NaN")
    return model


# ---------------------------------------------------------------------------
# Writing


def _encode(layer: Layer, load: Load) -> bytes:
    if load.raw:
        return load.raw
    if load.type == 1:
        return np.ascontiguousarray(load.values, dtype="<f4").tobytes()
    if load.storage == "fp32":
        return struct.pack("<I", TAG_FP32) + np.ascontiguousarray(load.values, dtype="<f4").tobytes()
    if load.storage == "fp16":
        raw = load.values.astype("<f2").tobytes()
        return struct.pack("<I", TAG_FP16) + raw + bytes(_align4(len(raw)) - len(raw))
    if load.storage == "int8":
        assert load.int8 is not None and load.int8.size == load.values.size
        raw = load.int8.astype(np.int8).tobytes()
        return struct.pack("<I", TAG_INT8) + raw + bytes(_align4(len(raw)) - len(raw))
    raise QuantizeError(f"{layer.where()}: unknown storage {load.storage!r}")


def write_model(model: Model, param: str | Path, weights: str | Path) -> None:
    """Write both files; everything is encoded before the first byte is written, and each
    file appears whole (written beside, then renamed)."""
    text, data = model.param_text(), model.bin_bytes()
    for path, content in ((Path(param), text.encode()), (Path(weights), data)):
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(content)
        os.replace(tmp, path)


# ---------------------------------------------------------------------------
# fp16


def convert_fp16(model: Model) -> Model:
    """The same model with every tagged (type 0) weight stored as fp16; type 1 data stays fp32."""
    out = []
    for layer in model.layers:
        loads = []
        for load in layer.loads:
            if load.type == 0:
                big = np.abs(load.values) > 65504
                if big.any():
                    raise QuantizeError(f"{layer.where()}: its {load.role} has values beyond fp16's range "
                                        f"(max |w| {float(np.abs(load.values).max()):g})")
                load = replace(load, storage="fp16", raw=b"",
                               values=load.values.astype(np.float16).astype(np.float32))
            loads.append(load)
        out.append(replace(layer, loads=loads, params=list(layer.params)))
    return Model(out, model.blob_count)


def convert_fp32(model: Model) -> Model:
    """The same model with every tagged weight stored as plain fp32 (tag 0)."""
    out = []
    for layer in model.layers:
        loads = [replace(load, storage="fp32", raw=b"") if load.type == 0 else load for load in layer.loads]
        out.append(replace(layer, loads=loads, params=list(layer.params)))
    return Model(out, model.blob_count)


# ---------------------------------------------------------------------------
# int8


def float2int8(x: F32) -> I8:
    """ncnn's float2int8: round half away from zero, clamp to [-127, 127]."""
    r: F32 = (np.sign(x) * np.floor(np.abs(x) + np.float32(0.5))).astype(np.float32)
    out: I8 = np.clip(r, -127, 127).astype(np.int8)
    return out


def weight_scales(weights: F32, rows: int) -> F32:
    """127 / max|w| per row (output channel, or group); 0 for an all-zero row."""
    absmax = np.abs(weights.reshape(rows, -1)).max(axis=1)
    safe = np.where(absmax > 0, absmax, np.float32(1))
    return np.where(absmax > 0, np.float32(127) / safe, np.float32(0)).astype(np.float32)


def quantizable(layer: Layer) -> str | None:
    """None when ncnn's generic int8 forward can run this layer; else why not."""
    if layer.type not in ("Convolution", "ConvolutionDepthWise", "InnerProduct"):
        return "no int8 forward in ncnn's generic code"
    if layer.type != "InnerProduct" and layer.get_int(19, 0):
        return "dynamic weights"
    if not layer.loads:
        return "no weights"
    if layer.type != "InnerProduct" and layer.get_float(18, 0.0) != 0.0:
        return "pad value 18 is not 0 (the int8 path pads the quantized blob)"
    return None


def _rows(layer: Layer) -> int:
    if layer.type == "ConvolutionDepthWise":
        return layer.get_int(7, 1)
    return layer.get_int(0, 0)


def canonical_blob(model: Model, blob: str) -> str:
    """The blob a Split output copies (followed back through Splits): the data itself."""
    producers = {top: layer for layer in model.layers for top in layer.tops}
    while blob in producers and producers[blob].type == "Split":
        blob = producers[blob].bottoms[0]
    return blob


def int8_layers(model: Model, skip: Iterable[str] = ()) -> list[Layer]:
    skipped = set(skip)
    return [layer for layer in model.layers if layer.name not in skipped and quantizable(layer) is None]


def passes_int8(layer: Layer) -> bool:
    """Whether ncnn_mp passes an int8 blob through this layer unchanged in scale (its
    kernel_pass.cpp and Split; the same list as shape_guard.cpp's read_int8_role)."""
    if layer.type in ("Split", "Concat", "Slice", "ShuffleChannel", "Noop", "Crop"):
        return True
    if layer.type == "ReLU":
        return layer.get_float(0, 0.0) == 0.0
    if layer.type == "Pooling":  # (max or average, not adaptive)
        return layer.get_int(0, 0) in (0, 1) and layer.get_int(7, 0) == 0
    if layer.type == "Interp":  # (nearest, bilinear or bicubic, sized by its parameters: one bottom)
        return 1 <= layer.get_int(0, 0) <= 3 and layer.get_int(5, 0) == 0 and not layer.value(9) \
            and len(layer.bottoms) == 1
    return moves_only(layer)


def moves_only(layer: Layer) -> bool:
    """A layer that only moves its input's elements (a Reshape sized by its parameters, a
    Permute): int8 passes it in its scale, and given that scale as param 20 it writes the
    values as floats instead (kernel_pass.cpp: where an int8 chain reaches a network output)."""
    return layer.type in ("Reshape", "Permute") and len(layer.bottoms) == 1 and len(layer.tops) == 1 \
        and not layer.value(6)


def sink_tables(model: Model) -> Model:
    """The model with each one-input Sigmoid (reads_int8_to_float; not a Softmax, which depends on
    where its axis lies) whose output only Reshapes
    and Permutes move (each blob read once) placed after them: a function of each element
    commutes with moving the elements, so every output is the same, bit for bit, and an int8
    chain reaches the Sigmoid's table through them (a detector's class scores: Sigmoid,
    Reshape, Permute) instead of its float output being moved twice as large. The moved
    blobs get new names; the last keeps its own."""
    layers = [replace(layer, bottoms=list(layer.bottoms), tops=list(layer.tops)) for layer in model.layers]
    names = {b for layer in layers for b in layer.bottoms + layer.tops}

    def readers(blob: str) -> list[Layer]:
        return [layer for layer in layers if blob in layer.bottoms]

    def fresh(blob: str) -> str:
        name, n = blob + "_q", 1
        while name in names:
            n += 1
            name = f"{blob}_q{n}"
        names.add(name)
        return name

    for table in [layer for layer in layers if layer.type == "Sigmoid" and reads_int8_to_float(layer)
                  and len(layer.tops) == 1]:
        path: list[Layer] = []
        blob = table.tops[0]
        while len(readers(blob)) == 1 and moves_only(readers(blob)[0]):
            path.append(readers(blob)[0])
            blob = path[-1].tops[0]
        if not path:
            continue
        path[0].bottoms = [table.bottoms[0]]
        for i, layer in enumerate(path):
            layer.tops = [fresh(layer.tops[0])]
            if i + 1 < len(path):
                path[i + 1].bottoms = list(layer.tops)
        table.bottoms, table.tops = list(path[-1].tops), [blob]
        layers.remove(table)
        layers.insert(layers.index(path[-1]) + 1, table)
    return Model(layers, model.blob_count)


def _unit_coefficients(layer: Layer) -> bool:
    """Whether an Eltwise's coefficients (param 1, an array: -23301=n,c0,...) are absent or all 1."""
    text = layer.value(-23301)
    if text is None:
        return True
    try:
        return all(float(c) == 1.0 for c in text.split(",")[1:])
    except ValueError:
        return False


def eltwise_as_binaryop(model: Model) -> Model:
    """The model with each Eltwise of two inputs that is a plain sum (op 1, coefficients absent or
    all 1) or product (op 0) written as the BinaryOp that computes the same (add, mul): the same
    float result element by element, and a BinaryOp ncnn_mp computes from int8 into int8
    (int8_op), so a residual join (darknet's and Caffe's converters write Eltwise) stays in the
    chain instead of leaving it in floats on both sides. Other Eltwises stay as they are."""
    out = []
    for layer in model.layers:
        op = layer.get_int(0, 0) if layer.type == "Eltwise" else -1
        if len(layer.bottoms) == 2 and len(layer.tops) == 1 and (op == 0 or (op == 1 and _unit_coefficients(layer))):
            layer = replace(layer, type="BinaryOp", params=[("0", "0" if op == 1 else "2")])
        out.append(replace(layer, bottoms=list(layer.bottoms), tops=list(layer.tops)))
    return Model(out, model.blob_count)


def int8_op(layer: Layer) -> bool:
    """A BinaryOp ncnn_mp can compute from two int8 blobs into an int8 one, requantized (add,
    mul; no scalar): its kernel_pass.cpp reads the scales from params 20, 21 and 22."""
    return layer.type == "BinaryOp" and len(layer.bottoms) == 2 and layer.get_int(1, 0) == 0 \
        and layer.get_int(0, 0) in (0, 2)


def reads_int8_to_float(layer: Layer) -> bool:
    """A layer ncnn_mp runs on an int8 blob into floats through a table of the 255 values (a
    Sigmoid; a Softmax, its exp(x - max): kernel_pass.cpp), given its input's scale as param 20."""
    return layer.type in ("Sigmoid", "Softmax") and len(layer.bottoms) == 1 and len(layer.tops) == 1


PROBABILITY_SCALE = 127.0  # a Sigmoid's int8 output (--int8-outputs): q = round(p * 127)


def _ends(model: Model) -> set[str]:
    """The layers that end an int8 chain at a network output: moves_only ones whose output
    nothing reads, given the chain's scale as param 20 (int8 in, floats out); with int8
    outputs, they pass the int8 on instead, its scale as param 21."""
    read = {b for layer in model.layers for b in layer.bottoms}
    return {layer.name for layer in model.layers if moves_only(layer) and layer.tops[0] not in read}


def _joined(layer: Layer) -> list[str]:
    """The bottoms a pass layer joins with its tops (a Crop's second bottom is a shape only)."""
    return layer.bottoms[:1] if layer.type == "Crop" else layer.bottoms


@dataclass
class Chain:
    """Blobs joined by layers that pass int8 through (passes_int8): int8 from the layers that
    write into them (`producers`) to the layers that read them (`consumers`)."""

    blobs: list[str]
    producers: list[str]
    consumers: list[str]


def chains(model: Model, chosen: Iterable[str], int8_outputs: bool = False) -> list[Chain]:
    """The groups of blobs that can stay int8 between int8 layers: written only by int8
    Convolution / ConvolutionDepthWise layers (ncnn requantizes only those) or int8 BinaryOps
    (int8_op), read only by int8 layers, none of them an output of the network (a blob nothing
    reads) but where a Reshape or Permute ends the chain there (_ends: it writes the floats). A BinaryOp is int8 where its inputs and its output all are: found as the greatest
    such set (every candidate first, then those whose blobs do not qualify dropped, again)."""
    convs = set(chosen)  # (once: `chosen` may be a generator)
    ops = {layer.name for layer in model.layers if int8_op(layer)}
    tables = {layer.name for layer in model.layers if reads_int8_to_float(layer)} | _ends(model)
    while True:
        groups, find = _groups(model, convs | ops, convs | ops | tables, int8_outputs)
        int8_blobs = {find(b) for g in groups for b in g.blobs}
        kept = {layer.name for layer in model.layers if layer.name in ops and
                all(find(b) in int8_blobs for b in layer.bottoms + layer.tops)}
        if kept == ops:
            return groups
        ops = kept


def _groups(model: Model, writers: set[str], readers: set[str],
            int8_outputs: bool = False) -> tuple[list[Chain], Callable[[str], str]]:
    parent: dict[str, str] = {}

    def find(b: str) -> str:
        while parent.setdefault(b, b) != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        return b

    ends = _ends(model)  # (they read the chain and write floats: not joined; with int8 outputs, joined)

    def joins(layer: Layer) -> bool:
        return passes_int8(layer) and (int8_outputs or layer.name not in ends)

    for layer in model.layers:
        if joins(layer):
            for b in _joined(layer)[1:] + layer.tops:
                parent[find(b)] = find(layer.bottoms[0])
    read = {b for layer in model.layers for b in layer.bottoms}
    groups: dict[str, Chain] = {}
    for layer in model.layers:
        for b in layer.tops:
            groups.setdefault(find(b), Chain([], [], [])).blobs.append(b)
    for layer in model.layers:
        if joins(layer):
            continue
        for b in dict.fromkeys(find(t) for t in layer.tops):
            groups[b].producers.append(layer.name)
        for b in dict.fromkeys(find(t) for t in layer.bottoms):
            if b in groups:
                groups[b].consumers.append(layer.name)
    by_name = {layer.name: layer for layer in model.layers}
    outputs = {t for name in ends for t in by_name[name].tops} if int8_outputs else set()
    out = []
    for g in groups.values():
        writers_ok = bool(g.producers) and all(
            p in writers and by_name[p].type != "InnerProduct" for p in g.producers)
        ends_at_output = any(b in outputs for b in g.blobs)
        if writers_ok and (g.consumers or ends_at_output) and all(c in readers for c in g.consumers) and \
                all(b in read or b in outputs for b in g.blobs):
            out.append(g)
    return out, find


def quantize(model: Model, bottom_scales: Mapping[str, float], skip: Iterable[str] = (),
             top_scales: Mapping[str, float] | None = None,
             op_scales: Mapping[str, Mapping[str, float]] | None = None) -> Model:
    """The int8 model: every quantizable layer not in `skip` gets int8 weights, weight
    scales and its bottom scale (bottom_scales, by canonical blob name); a layer named in
    `top_scales` also its output scale (int8_scale_term + 100: its output requantized to
    int8 with that scale, for the int8 layers after it). A BinaryOp named in `op_scales`
    (int8_op) gets its inputs' and output's scales as params 20, 21, 22; a Sigmoid
    (reads_int8_to_float) or a chain's end at an output (_ends) its input's as param 20."""
    chosen = {layer.name for layer in int8_layers(model, skip)}
    top_scales = top_scales or {}
    op_scales = op_scales or {}
    out = []
    for layer in model.layers:
        if layer.name in op_scales:
            keep = [(k, v) for k, v in layer.params if k not in op_scales[layer.name]]
            given = [(k, f"{v:.9e}") for k, v in op_scales[layer.name].items()]  # (floats: an e)
            out.append(replace(layer, loads=list(layer.loads), params=keep + given))
            continue
        if layer.name not in chosen:
            out.append(replace(layer, loads=list(layer.loads), params=list(layer.params)))
            continue
        blob = canonical_blob(model, layer.bottoms[0])
        if blob not in bottom_scales:
            raise QuantizeError(f"{layer.where()}: no calibration scale for its input blob {blob!r}")
        scale = float(bottom_scales[blob])
        if not np.isfinite(scale) or scale <= 0:
            raise QuantizeError(f"{layer.where()}: bad scale {scale} for blob {blob!r}")
        weight = layer.loads[0]
        rows = _rows(layer)
        if rows <= 0 or weight.values.size % rows:
            raise QuantizeError(f"{layer.where()}: {weight.values.size} weights do not split into {rows} rows")
        scales = weight_scales(weight.values, rows)
        q = float2int8(weight.values.reshape(rows, -1) * scales[:, None]).reshape(-1)
        loads = [replace(weight, storage="int8", int8=q, raw=b""), *layer.loads[1:],
                 Load("weight_scales", 1, scales),
                 Load("bottom_scale", 1, np.array([scale], dtype=np.float32))]
        term = 1 if layer.type == "ConvolutionDepthWise" else 2
        if layer.name in top_scales:
            loads.append(Load("top_scale", 1, np.array([top_scales[layer.name]], dtype=np.float32)))
            term += 100
        params = [(k, v) for k, v in layer.params if k != "8"] + [("8", str(term))]  # an explicit 8=0 goes
        out.append(replace(layer, loads=loads, params=params))
    return Model(out, model.blob_count)


# ---------------------------------------------------------------------------
# Calibration (runs the fp32 model in the CPython ncnn wheel)


def _kl_threshold(hist: npt.NDArray[np.float64], levels: int = 128) -> int:
    """The number of histogram bins to keep: the clipping whose `levels`-level quantization
    loses least information (KL divergence between the clipped and the quantized histogram)."""
    bins = hist.size
    if hist[levels:].sum() == 0:
        return int(np.nonzero(hist)[0].max() + 1) if hist.any() else bins
    best, best_kl = bins, np.inf
    for i in range(levels, bins + 1):
        p = hist[:i].copy()
        p[-1] += hist[i:].sum()
        group = (np.arange(i) * levels) // i
        nonzero = hist[:i] > 0
        sums = np.bincount(group, weights=hist[:i], minlength=levels)
        counts = np.bincount(group, weights=nonzero.astype(np.float64), minlength=levels)
        q = np.where(nonzero, sums[group] / np.maximum(counts[group], 1), 0.0)
        mask = p > 0
        ps, qs = p / p.sum(), q / max(q.sum(), 1e-30)
        kl = float(np.sum(ps[mask] * np.log(ps[mask] / np.maximum(qs[mask], 1e-12))))
        if kl < best_kl:
            best, best_kl = i, kl
    return best


def wheel_mat(ncnn: Any, sample: F32) -> Any:
    """The array as a Mat of the CPython ncnn wheel (float32, 1 to 4 dimensions), holding a
    copy of its own: every input the tools and tests give the wheel goes through here."""
    arr = np.ascontiguousarray(sample, dtype=np.float32)
    if arr.ndim not in (1, 2, 3, 4):
        raise QuantizeError(f"a calibration sample has {arr.ndim} dimensions (1 to 4: w, h w, c h w, c d h w)")
    # The wheel's Mat borrows the array's memory and keeps no reference to it: a copy made here
    # (a sample that is not C-contiguous) would be freed on return, so the Mat takes its own copy.
    return ncnn.Mat(arr).clone()


def calibrate(param: str | Path, weights: str | Path, samples: Sequence[F32], blobs: Iterable[str],
              input_name: str | None = None, method: str = "maxabs") -> dict[str, float]:
    """Run the fp32 model (the ncnn wheel, 1 thread) on each sample and pick a scale for
    each of `blobs`: 127 / the threshold the method chooses."""
    import ncnn

    if method not in METHODS:
        raise QuantizeError(f"unknown calibration method {method!r} (one of {', '.join(METHODS)})")
    if not samples:
        raise QuantizeError("no calibration samples")
    layers, _ = parse_param(Path(param).read_text())
    if input_name is None:
        inputs = [layer.tops[0] for layer in layers if layer.type == "Input"]
        if len(inputs) != 1:
            raise QuantizeError(f"the model has {len(inputs)} Input layers: name the input blob")
        input_name = inputs[0]
    names = list(dict.fromkeys(blobs))
    net = ncnn.Net()
    net.opt.num_threads = 1
    net.opt.lightmode = False  # keep every blob: in light mode in-place layers overwrite them
    if net.load_param(str(param)) != 0 or net.load_model(str(weights)) != 0:
        raise QuantizeError(f"the ncnn wheel could not load {param} / {weights}")

    def run(sample: F32) -> dict[str, F32]:
        ex = net.create_extractor()
        ex.input(input_name, wheel_mat(ncnn, sample))
        got = {}
        for name in names:
            ret, mat = ex.extract(name)
            if ret != 0:
                raise QuantizeError(f"calibration: extracting blob {name!r} failed ({ret})")
            got[name] = np.array(mat, dtype=np.float32).reshape(-1)
        return got

    # Pass 1: the largest |x| of each blob. Pass 2 (kl, percentile): a histogram of the
    # non-zero |x| over [0, that max], running the samples again rather than keeping every
    # blob of every sample in memory.
    absmax = dict.fromkeys(names, 0.0)
    for sample in samples:
        for name, v in run(sample).items():
            absmax[name] = max(absmax[name], float(np.abs(v).max(initial=0.0)))
    hists = {name: np.zeros(HIST_BINS, dtype=np.float64) for name in names}
    if method != "maxabs":
        for sample in samples:
            for name, v in run(sample).items():
                a = np.abs(v[v != 0])
                if absmax[name] > 0 and a.size:
                    hists[name] += np.histogram(a, bins=HIST_BINS, range=(0.0, absmax[name]))[0]
    scales = {}
    for name in names:
        top = absmax[name]
        if top <= 0:
            scales[name] = 1.0  # an all-zero blob in every sample: any scale gives zeros
            continue
        threshold = top
        if method == "kl" and hists[name].sum() > 0:
            threshold = _kl_threshold(hists[name]) * top / HIST_BINS
        elif method == "percentile" and hists[name].sum() > 0:
            cum = np.cumsum(hists[name])
            k = int(np.searchsorted(cum, cum[-1] * PERCENTILE / 100))
            threshold = min(top, (k + 1) * top / HIST_BINS)
        scales[name] = 127.0 / threshold
    return scales


# ---------------------------------------------------------------------------
# The whole job


@dataclass
class Summary:
    """What quantize_files / float_files did."""

    int8: list[str] = field(default_factory=list)  # quantized layers, with their scales
    kept: list[str] = field(default_factory=list)  # layers with weights left as they were, and why
    bin_bytes: tuple[int, int] = (0, 0)  # .bin size before, after

    def text(self) -> str:
        lines = [*self.int8, *self.kept]
        before, after = self.bin_bytes
        lines.append(f".bin: {before} bytes -> {after} bytes ({after / max(before, 1):.1%})")
        return "\n".join(lines)


def quantize_files(param_in: str | Path, bin_in: str | Path, param_out: str | Path, bin_out: str | Path,
                   samples: Sequence[F32], method: str = "maxabs", input_name: str | None = None,
                   skip: Iterable[str] = (), layouts: Mapping[str, Layout] | None = None,
                   chain: bool = False, int8_outputs: bool = False) -> Summary:
    """fp32 model in, int8 model out (see the module docstring); chain: int8 between int8
    layers where chains() finds it; int8_outputs (with chain): the chains that reach a
    network output through a Reshape or Permute keep it int8 (Net.output_int8_scale), and a
    Sigmoid there writes int8 probabilities (q / 127): a quarter of the outputs' RAM."""
    if int8_outputs and not chain:
        raise QuantizeError("int8 outputs come with int8 between layers: give --chain too")
    model = read_model(param_in, bin_in, layouts)
    calibrated = {b for layer in model.layers for b in layer.tops}  # (the blobs the fp32 model has)
    if chain:
        model = sink_tables(eltwise_as_binaryop(model))
    skip = list(skip)
    missing = set(skip) - {layer.name for layer in model.layers}
    if missing:
        raise QuantizeError(f"--skip names layers the model does not have: {', '.join(sorted(missing))}")
    chosen = int8_layers(model, skip)
    if not chosen:
        raise QuantizeError("the model has no layer ncnn can run in int8 (Convolution, "
                            "ConvolutionDepthWise, InnerProduct)")
    blobs = [canonical_blob(model, layer.bottoms[0]) for layer in chosen]
    groups = chains(model, (layer.name for layer in chosen), int8_outputs) if chain else []
    scales = calibrate(param_in, bin_in, samples, blobs + [b for g in groups for b in g.blobs if b in calibrated],
                       input_name, method)
    # A chain's blobs share one scale, its widest range: each int8 layer writing into it
    # requantizes with that scale, and each reading it takes it as its input scale. (Blobs
    # sink_tables renamed hold the values of a blob before them in the chain: not measured.)
    top_scales: dict[str, float] = {}
    for g in groups:
        shared = min(scales[b] for b in g.blobs if b in scales)
        for b in g.blobs:
            scales[b] = shared
        top_scales.update(dict.fromkeys(g.producers, shared))
    by_name = {layer.name: layer for layer in model.layers}
    op_scales: dict[str, dict[str, float]] = {
        name: {"20": scales[by_name[name].bottoms[0]], "21": scales[by_name[name].bottoms[1]],
               "22": top_scales.pop(name)}
        for name in list(top_scales) if int8_op(by_name[name])}
    # a Sigmoid reading an int8 group: its scale (param 20; the table's values are q / scale);
    # a Reshape or Permute ending one at an output alike (its values q / scale)
    # (with int8 outputs, a Sigmoid writing one int8 in scale 127 (21), and the layers ending a
    # chain there their output's scale (21): Net.output_int8_scale reads it)
    ends, read = _ends(model), {b for layer in model.layers for b in layer.bottoms}
    for g in groups:
        for name in g.consumers:
            layer = by_name[name]
            if reads_int8_to_float(layer) or name in ends:
                op_scales[name] = {"20": scales[layer.bottoms[0]]}
            if int8_outputs and layer.type == "Sigmoid" and reads_int8_to_float(layer) and layer.tops[0] not in read:
                op_scales[name]["21"] = PROBABILITY_SCALE
        if int8_outputs:
            op_scales.update({name: {"21": scales[g.blobs[0]]} for name in ends if by_name[name].tops[0] in g.blobs})
    out = quantize(model, scales, skip, top_scales, op_scales)
    write_model(out, param_out, bin_out)
    summary = Summary(bin_bytes=(Path(bin_in).stat().st_size, Path(bin_out).stat().st_size))
    for layer in out.layers:
        if layer.name in {c.name for c in chosen}:
            chained = layer.name in top_scales
            ws = layer.loads[-3 if chained else -2].values
            bottom = layer.loads[-2 if chained else -1].values[0]
            summary.int8.append(f"int8  {layer.where()}: input {canonical_blob(model, layer.bottoms[0])!r} "
                                f"scale {bottom:.6g}, weight scales {float(ws.min()):.4g}..{float(ws.max()):.4g}"
                                + (f", output int8 with scale {top_scales[layer.name]:.6g}" if chained else ""))
        elif layer.name in op_scales and "22" in op_scales[layer.name]:
            sa, sb, so = (op_scales[layer.name][k] for k in ("20", "21", "22"))
            summary.int8.append(f"int8  {layer.where()}: input scales {sa:.6g}, {sb:.6g}, output int8 with scale {so:.6g}")
        elif layer.name in op_scales and "20" not in op_scales[layer.name]:
            summary.int8.append(f"int8  {layer.where()}: int8 output, scale {op_scales[layer.name]['21']:.6g} "
                                "(Net.output_int8_scale)")
        elif layer.name in op_scales:
            given = op_scales[layer.name]
            how = "a table of its 255 values" if reads_int8_to_float(layer) else "the values q / scale"
            out_as = f"int8 output, scale {given['21']:.6g}" if "21" in given else "float out"
            summary.int8.append(f"int8  {layer.where()}: input scale {given['20']:.6g}, {how}, {out_as}")
        elif layer.loads:
            why = "skipped" if layer.name in skip else (quantizable(layer) or "")
            summary.kept.append(f"fp32  {layer.where()}: {why}")
    return summary


def float_files(param_in: str | Path, bin_in: str | Path, param_out: str | Path, bin_out: str | Path,
                precision: str = "fp16", layouts: Mapping[str, Layout] | None = None) -> Summary:
    """The same model with its tagged weights stored as `precision`: "fp16" (half the flash)
    or "fp32" (what ncnn computes with: weights that can stay in place in flash)."""
    model = read_model(param_in, bin_in, layouts)
    out = convert_fp16(model) if precision == "fp16" else convert_fp32(model)
    write_model(out, param_out, bin_out)
    summary = Summary(bin_bytes=(Path(bin_in).stat().st_size, Path(bin_out).stat().st_size))
    for layer in out.layers:
        for load in layer.loads:
            kind = load.storage if load.type == 0 else "fp32 (type 1: ncnn reads it untagged)"
            summary.kept.append(f"{layer.where()}: {load.role} x{load.values.size} {kind}")
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("param_in")
    ap.add_argument("bin_in")
    ap.add_argument("param_out")
    ap.add_argument("bin_out")
    ap.add_argument("--calib", help=".npy of N preprocessed inputs (int8 mode)")
    ap.add_argument("--input", help="input blob name (default: the model's one Input layer)")
    ap.add_argument("--method", choices=METHODS, default="maxabs", help="activation scale choice")
    ap.add_argument("--skip", action="append", default=[], metavar="LAYER", help="keep this layer fp32")
    ap.add_argument("--chain", action="store_true",
                    help="int8 between int8 layers (needs ncnn_mp's kernels: NCNN_MP_KERNELS=1)")
    ap.add_argument("--int8-outputs", action="store_true",
                    help="with --chain: outputs an int8 chain reaches stay int8 (Net.output_int8_scale)")
    ap.add_argument("--fp16", action="store_true", help="store weights as fp16 instead (no calibration)")
    ap.add_argument("--fp32", action="store_true",
                    help="store weights as fp32 (widen fp16 weights so that they can stay in flash)")
    ap.add_argument("--layout", action="append", default=[], metavar="TYPE=T:N,...",
                    help="weights of a custom layer type: T the ncnn load type (0/1), N a count or "
                         "@ID (a parameter's value); TYPE= for none")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    try:
        layouts = dict(parse_layout(s) for s in args.layout)
        if args.fp16 or args.fp32:
            summary = float_files(args.param_in, args.bin_in, args.param_out, args.bin_out,
                                  "fp16" if args.fp16 else "fp32", layouts)
        else:
            if not args.calib:
                raise QuantizeError("int8 needs --calib samples.npy (or give --fp16)")
            samples = np.load(args.calib).astype(np.float32)
            summary = quantize_files(args.param_in, args.bin_in, args.param_out, args.bin_out, list(samples),
                                     args.method, args.input, args.skip, layouts, args.chain, args.int8_outputs)
    except (QuantizeError, OSError) as e:
        print(f"quantize_int8: {e}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(summary.text())
    return 0


if __name__ == "__main__":
    sys.exit(main())

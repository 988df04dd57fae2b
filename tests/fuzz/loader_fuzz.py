# SPDX-License-Identifier: MIT
"""Loader fuzzer: real models, mutated, through load_param / load_param_bin / load_model /
extract on the Unix firmware. Every case must end in success or a Python exception, and a
Net that saw a failure must still load the real model and give the right answer.

    python3 -m ci.tool fuzz-loader --cases 100000 --seed 1 [--jobs 2] [--batch 400] [--arrays N]    (make fuzz-loader)

The models: the project's digits model (build/models/digits, with its Python layer) and,
when ../shared/models is here, MNIST and ncnn's benchmark nets (weightless: their
weights come from DataReader(zeros=True)). Mutations: token swaps, huge or negative
counts, dims and parameter values, unknown or swapped layer types, missing blobs,
forward references (cycles), duplicated or dropped lines, truncation, random bytes; the
binary param format; truncated, resized and overwritten weights. Case `i` of seed `s` is
the same on every run (its own random.Random), whatever the batch size.

Array cases (--arrays, a tenth of --cases unless given; make_array_case): one layer the shape
guard wraps with a parameter array (coefficients, a constant operand's rows or columns,
per-channel scales, Slice's lists) shorter, longer, empty or far longer than its forward
reads, the .bin changed with it or not: a ValueError or MemoryError naming the layer, or the
outputs of the same layer with the array exactly as long.

Cases whose weights come from a buffer also load them in place (load_model(copy=False),
header "ip"): from a bytes object of their own, or from a read-only memoryview slice at an
offset into a larger one (now and then an unaligned one, which must be refused), with the
case's param or, half the time, the family's own (damage in the weights alone). The same
bytes loaded by copy must end the same way and give the same floats, whether the runner
then drops the buffer (collected, its memory reused: only the net keeps it) or compares it
after the extract (never written); weights_info() must count what both loads consumed.

A process that crashes or hangs is replayed to find the case (or the shortest run of
cases) that does it, and gdb (valgrind for a damaged heap) names where it crashed. A
crash in a layer's own code inside ncnn is a known ncnn fault (KNOWN_NCNN_ISSUES.md):
counted, not failed. Anything else is a finding: shrunk, saved under
tests/fuzz/regressions/ and reported; tests/test_fuzz_loader.py replays every saved case.
The run continues with the case after the one that died.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import random
import re
import struct
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, NamedTuple

from fuzzlib import (FUZZ, Backtrace, MicroPython, Run, backtrace, digits_dir,
                     firmware, first_memory_error, regressions, run_batch, sanitized, sanitizer_report,
                     save_regression, shared_models, shrink)

RUNNER = FUZZ / "loader_runner.py"

# ncnn's built-in layer types (src/layer_type_enum.h of the pinned ncnn).
LAYER_TYPES = """AbsVal ArgMax BatchNorm Bias BNLL Concat Convolution Crop Deconvolution Dropout Eltwise ELU
Embed Exp Flatten InnerProduct Input Log LRN MemoryData MVN Pooling Power PReLU Proposal Reduction ReLU Reshape
ROIPooling Scale Sigmoid Slice Softmax Split SPP TanH Threshold Tile RNN LSTM BinaryOp UnaryOp
ConvolutionDepthWise Padding Squeeze ExpandDims Normalize Permute PriorBox DetectionOutput Interp
DeconvolutionDepthWise ShuffleChannel InstanceNorm Clip Reorg YoloDetectionOutput Quantize Dequantize
Yolov3DetectionOutput PSROIPooling ROIAlign Packing Requantize Cast HardSigmoid SELU HardSwish Noop PixelShuffle
DeepCopy Mish StatisticsPooling Swish Gemm GroupNorm LayerNorm Softplus GRU MultiHeadAttention GELU Convolution1D
Pooling1D ConvolutionDepthWise1D Convolution3D ConvolutionDepthWise3D Pooling3D MatMul Deconvolution1D
DeconvolutionDepthWise1D Deconvolution3D DeconvolutionDepthWise3D Einsum DeformableConv2D GLU Fold Unfold
GridSample CumulativeSum CopyTo Erf Diag CELU Shrink RMSNorm Spectrogram InverseSpectrogram Flip SDPA
RotaryEmbed""".split()

# The Python layers the runner registers (by name, and by type index 256 + i for binary params).
CUSTOM_TYPES = ["Standardize"]
CUSTOM_BIT = 256

INTS = [0, 1, -1, 2, 3, 4, 5, 7, 8, 16, 31, 32, 33, 255, 256, 1023, 1024, 4096, 65535, 65536, 1 << 20, 1 << 24,
        2**31 - 1, -(2**31), 2**31, 2**32, 10**12, -2, -3, -233, -23300, -23330, -23400, 100000, 99999999]
FLOATS = ["0.0", "-0.0", "0.5", "-1.5", "1e30", "-1e30", "1e-40", "3.4e38", "1e39", "nan", "inf", "-inf", "1.", ".5"]
JUNK = ["", "=", ",", "1,", "1,,2", ",1", "0x10", "+5", "--1", "1e", ".", "\u00e4", "\"abc\"", "\"", "a=b", "1=2=3",
        "-23300=", "-23300=2,1", "-23300=-1", "-23300=99999999,1", "0=1,2,3", "0=1.5,2", "0=\"s\"", "0=abc", "-0=1"]


def interesting_int(rng: random.Random) -> int:
    return rng.choice(INTS) if rng.random() < 0.8 else rng.randint(-70000, 70000)


def interesting_value(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.6:
        return str(interesting_int(rng))
    if r < 0.85:
        return rng.choice(FLOATS)
    n = rng.choice([0, 1, 2, 3, 5, 9, 40])
    return ",".join(str(interesting_int(rng)) for _ in range(n)) or "1,"


# ---------------------------------------------------------------------------
# The models.

Lines = list[list[str]]  # a .param as tokens: [magic], [layer_count, blob_count], then one list per layer


def parse_param(text: str) -> Lines:
    return [line.split() for line in text.splitlines() if line.strip()]


def render(lines: Lines) -> str:
    return "".join(" ".join(toks) + "\n" for toks in lines)


def layer_parts(toks: list[str]) -> tuple[list[str], list[str], list[str]] | None:
    """(bottoms, tops, params) of a layer line, None if its counts are not sane."""
    try:
        nb, nt = int(toks[2]), int(toks[3])
    except (IndexError, ValueError):
        return None
    if nb < 0 or nt < 0 or 4 + nb + nt > len(toks):
        return None
    return toks[4:4 + nb], toks[4 + nb:4 + nb + nt], toks[4 + nb + nt:]


@dataclass
class Family:
    """One real model: the cases of a family are mutations of it."""

    name: str
    param_path: Path
    bin_path: Path | None  # None: weightless, loaded from DataReader(zeros=True)
    shape: list[int]
    weight: float  # how often cases pick it
    lines: Lines = field(default_factory=list)
    input: str = ""
    outputs: list[str] = field(default_factory=list)
    blobs: list[str] = field(default_factory=list)
    custom: list[str] = field(default_factory=list)
    bin_size: int = 0
    digest: str = ""  # of the model's files: a case's key (case_key) depends on them

    def __post_init__(self) -> None:
        h = hashlib.sha256(self.param_path.read_bytes())
        if self.bin_path:
            h.update(self.bin_path.read_bytes())
        self.digest = h.hexdigest()[:16]
        self.lines = parse_param(self.param_path.read_text())
        consumed, produced = set(), []
        for toks in self.lines[2:]:
            parts = layer_parts(toks)
            assert parts, f"{self.param_path}: cannot parse {toks}"
            bottoms, tops, _ = parts
            consumed.update(bottoms)
            produced += tops
            if toks[0] == "Input" and not self.input:
                self.input = tops[0]
            if toks[0] in CUSTOM_TYPES and toks[0] not in self.custom:
                self.custom.append(toks[0])
        self.outputs = [b for b in produced if b not in consumed]
        self.blobs = produced
        self.bin_size = self.bin_path.stat().st_size if self.bin_path else 0

    def info(self) -> dict[str, Any]:
        """What the runner needs to know of the family."""
        return {"param": str(self.param_path), "bin": str(self.bin_path) if self.bin_path else None,
                "custom": self.custom, "input": self.input, "shape": self.shape, "outputs": self.outputs}


BENCH_WEIGHTS = {"squeezenet": 0.10, "mobilenet": 0.06, "mobilenet_v2": 0.07, "resnet18": 0.02,
                 "shufflenet_v2": 0.08, "yolo-fastest-1.1": 0.08, "FastestDet": 0.08}
# The input each family runs on: small (a case must be quick), but one each net can take.
# resnet18 ends in a 7x7 average pooling of its 1/32-size feature map: anything under
# 224x224 gives that pooling less than its kernel, and ncnn then computes from memory
# past the blob (N1), so the family's own reference answer would be garbage.
BENCH_SHAPES = {"resnet18": [224, 224, 3]}


def discover_families(digits: Path | None = None, shared: Path | None = None) -> dict[str, Family]:
    """The models that are here: digits always (it is generated), the shared ones if present."""
    fams: dict[str, Family] = {}
    digits = digits or digits_dir()
    if (digits / "digits.param").exists():
        fams["digits"] = Family("digits", digits / "digits.param", digits / "digits.bin", [8, 8, 1], 0.22)
    shared = shared if shared is not None else shared_models()
    if shared and (shared / "mnist" / "mnist.param").exists():
        fams["mnist"] = Family("mnist", shared / "mnist" / "mnist.param", shared / "mnist" / "mnist.bin", [28, 28, 1], 0.28)
    for name, w in BENCH_WEIGHTS.items():
        p = shared / "bench" / f"{name}.param" if shared else None
        if p and p.exists():
            fams[name] = Family(name, p, None, BENCH_SHAPES.get(name, [32, 32, 3]), w)
    return fams


# ---------------------------------------------------------------------------
# Mutations of the param text (on tokens) and of binary data.

def pick_layer(rng: random.Random, lines: Lines) -> list[str] | None:
    return rng.choice(lines[2:]) if len(lines) > 2 else None


def m_number(rng: random.Random, lines: Lines, fams: list[Family]) -> None:
    """A number anywhere (header, counts, a parameter's value or array element) becomes an odd one."""
    spots = [(i, j) for i, toks in enumerate(lines) for j, t in enumerate(toks) if any(ch.isdigit() for ch in t)]
    if not spots:
        return
    i, j = rng.choice(spots)
    tok = lines[i][j]
    if "=" in tok:
        key, _, value = tok.partition("=")
        if "," in value and rng.random() < 0.6:
            items = value.split(",")
            items[rng.randrange(len(items))] = str(interesting_int(rng))
            value = ",".join(items)
        else:
            value = interesting_value(rng)
        lines[i][j] = key + "=" + value
    else:
        lines[i][j] = str(interesting_int(rng))


def m_header(rng: random.Random, lines: Lines, fams: list[Family]) -> None:
    """The layer or blob count, or the magic number, is off."""
    if len(lines) < 2 or len(lines[1]) < 2:
        return
    r = rng.random()
    if r < 0.1:
        lines[0] = [rng.choice(["7767516", "0", "-7767517", "7767517 7767517", "77675170"])]
        return
    k = rng.randrange(2)
    n = int(lines[1][k]) if lines[1][k].lstrip("-").isdigit() else 1
    lines[1][k] = str(rng.choice([n + 1, n - 1, n * 2, 0, -1, 1, interesting_int(rng)]))


def m_param_key(rng: random.Random, lines: Lines, fams: list[Family]) -> None:
    """A parameter's id changes (out of range, array ids, junk), or a parameter is added or dropped."""
    toks = pick_layer(rng, lines)
    if toks is None:
        return
    parts = layer_parts(toks)
    nparams = len(parts[2]) if parts else 0
    first = len(toks) - nparams
    r = rng.random()
    if r < 0.4 and nparams:
        j = first + rng.randrange(nparams)
        _, _, value = toks[j].partition("=")
        key = rng.choice(["-1", "32", "31", "30", "-23300", "-23331", "-23332", "-23400", "99999", "x", "",
                          str(rng.randrange(32)), str(-23300 - rng.randrange(32))])
        toks[j] = key + "=" + value
    elif r < 0.8:
        key = rng.choice([str(rng.randrange(32)), str(-23300 - rng.randrange(32))])
        value = interesting_value(rng)
        if key.startswith("-"):  # old-style array: count, then the elements
            n = rng.choice([0, 1, 2, 4, 8, interesting_int(rng)])
            value = ",".join([str(n)] + [str(interesting_int(rng)) for _ in range(max(0, min(n, 9)))])
        toks.insert(rng.randint(first, len(toks)), key + "=" + value)
    elif nparams:
        del toks[first + rng.randrange(nparams)]


def m_junk_token(rng: random.Random, lines: Lines, fams: list[Family]) -> None:
    toks = pick_layer(rng, lines) or lines[0]
    toks.insert(rng.randint(0, len(toks)), rng.choice(JUNK))


def m_layer_type(rng: random.Random, lines: Lines, fams: list[Family]) -> None:
    """A layer becomes another built-in type (keeping its blobs and params), or an unknown one."""
    toks = pick_layer(rng, lines)
    if toks is None:
        return
    r = rng.random()
    if r < 0.8:
        toks[0] = rng.choice(LAYER_TYPES)
    elif r < 0.9:
        toks[0] = rng.choice(CUSTOM_TYPES)
    else:
        toks[0] = rng.choice(["NoSuchLayer", "relu", "Input2", "x" * 300, "Convolution\x00", "3"])


def m_layer_counts(rng: random.Random, lines: Lines, fams: list[Family]) -> None:
    """A layer's bottom or top count no longer matches its blob names."""
    toks = pick_layer(rng, lines)
    if toks is None or len(toks) < 4:
        return
    k = rng.choice([2, 3])
    n = int(toks[k]) if toks[k].lstrip("-").isdigit() else 1
    toks[k] = str(rng.choice([n + 1, n - 1, 0, -1, 2, 3, interesting_int(rng)]))


def m_blobs(rng: random.Random, lines: Lines, fams: list[Family]) -> None:
    """Blob wiring: a bottom nobody produces, a bottom produced later (a cycle), a top
    named like an existing blob, a layer consuming its own top."""
    layers = [t for t in lines[2:] if layer_parts(t)]
    if not layers:
        return
    toks = rng.choice(layers)
    bottoms, tops, _ = layer_parts(toks)  # type: ignore[misc]
    all_tops = [b for t in layers for b in layer_parts(t)[1]]  # type: ignore[index]
    r = rng.random()
    if bottoms and r < 0.3:
        toks[4 + rng.randrange(len(bottoms))] = rng.choice(["missing_blob", "", "x" * 300])
    elif bottoms and r < 0.6 and all_tops:
        toks[4 + rng.randrange(len(bottoms))] = rng.choice(all_tops)  # maybe later: a forward edge
    elif tops and r < 0.8 and all_tops:
        toks[4 + len(bottoms) + rng.randrange(len(tops))] = rng.choice(all_tops)
    elif bottoms and tops:
        toks[4 + rng.randrange(len(bottoms))] = tops[0]


def m_lines(rng: random.Random, lines: Lines, fams: list[Family]) -> None:
    """A layer line is dropped, duplicated, moved, or borrowed from another model."""
    if len(lines) <= 2:
        return
    i = rng.randrange(2, len(lines))
    r = rng.random()
    if r < 0.3:
        del lines[i]
    elif r < 0.5:
        lines.insert(rng.randrange(2, len(lines) + 1), list(lines[i]))
    elif r < 0.75:
        j = rng.randrange(2, len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    else:
        other = rng.choice(fams).lines
        if len(other) > 2:
            lines.insert(i, list(rng.choice(other[2:])))


def m_token_swap(rng: random.Random, lines: Lines, fams: list[Family]) -> None:
    spots = [(i, j) for i, toks in enumerate(lines) for j in range(len(toks))]
    (i1, j1), (i2, j2) = rng.choice(spots), rng.choice(spots)
    lines[i1][j1], lines[i2][j2] = lines[i2][j2], lines[i1][j1]


def m_shape_hint(rng: random.Random, lines: Lines, fams: list[Family]) -> None:
    """ncnn's shape hints (-23330=...) and the Input's declared dims go wrong."""
    toks = pick_layer(rng, lines)
    if toks is None:
        return
    n = rng.choice([1, 2, 3, 4, 5, 8])
    dims = [str(rng.choice([1, 2, 3, 4, 5, -1, 0, 227, 65536, interesting_int(rng)])) for _ in range(n)]
    toks.append("-23330=" + ",".join([str(rng.choice([n, n - 1, n + 1, interesting_int(rng)]))] + dims))


MUTATORS: list[tuple[float, Callable[[random.Random, Lines, list[Family]], None]]] = [
    (0.24, m_number), (0.06, m_header), (0.12, m_param_key), (0.04, m_junk_token), (0.12, m_layer_type),
    (0.07, m_layer_counts), (0.12, m_blobs), (0.10, m_lines), (0.06, m_token_swap), (0.07, m_shape_hint),
]


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """Raw damage: truncation, random bytes overwritten or inserted, NULs and CRs."""
    b = bytearray(data)
    r = rng.random()
    if r < 0.35:
        return bytes(b[:rng.randint(0, len(b))])
    n = rng.choice([1, 1, 2, 4, 16, 64])
    junk = bytes(rng.choice([rng.randrange(256), 0, 13, 10, 32, 61, 44, 45]) for _ in range(n))
    at = rng.randint(0, len(b))
    if r < 0.7:
        b[at:at + n] = junk
    else:
        b[at:at] = junk
    return bytes(b)


def mutate_words(rng: random.Random, data: bytes) -> bytes:
    """Binary damage on 4-byte words: odd ints or floats, truncation, random bytes."""
    b = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 3])):
        r = rng.random()
        if r < 0.15 or len(b) < 4:
            b = b[:rng.randint(0, len(b))]
        elif r < 0.75:
            at = rng.randrange(len(b) // 4) * 4
            if rng.random() < 0.8:
                b[at:at + 4] = struct.pack("<i", max(-(2**31), min(2**31 - 1, interesting_int(rng))))
            else:
                b[at:at + 4] = struct.pack("<f", float(rng.choice(["nan", "inf", "1e30", "-1", "0.5"])))
        else:
            at = rng.randint(0, len(b))
            b[at:at] = bytes(rng.randrange(256) for _ in range(rng.choice([1, 4, 8])))
    return bytes(b)


def is_float_token(v: str) -> bool:
    return any(ch in v for ch in ".eE") or v in ("nan", "inf", "-inf")


def to_param_bin(lines: Lines, typeindex: dict[str, int]) -> tuple[bytes, dict[str, int]] | None:
    """The binary param (.param.bin) of a text param and its blob numbers by name (a binary
    param has no names), or None where the text cannot say it."""
    def value(v: str) -> bytes:
        return struct.pack("<f", float(v)) if is_float_token(v) else struct.pack("<i", int(v))
    try:
        out = [struct.pack("<iii", int(lines[0][0]), int(lines[1][0]), int(lines[1][1]))]
        slots: dict[str, int] = {}
        nslot = 0
        for toks in lines[2:]:
            parts = layer_parts(toks)
            if parts is None or toks[0] not in typeindex:
                return None
            bottoms, tops, params = parts
            words = [typeindex[toks[0]], len(bottoms), len(tops)]
            for b in bottoms:
                if b not in slots:
                    slots[b], nslot = nslot, nslot + 1
                words.append(slots[b])
            for t in tops:
                slots[t], nslot = nslot, nslot + 1
                words.append(slots[t])
            out.append(struct.pack("<%di" % len(words), *words))
            for p in params:
                key, _, v = p.partition("=")
                k = int(key)
                if k <= -23300:
                    items = v.split(",")
                    out.append(struct.pack("<ii", k, int(items[0])) + b"".join(value(x) for x in items[1:]))
                elif "," in v:
                    items = [x for x in v.split(",") if x]
                    out.append(struct.pack("<ii", -23300 - k, len(items)) + b"".join(value(x) for x in items))
                else:
                    out.append(struct.pack("<i", k) + value(v))
            out.append(struct.pack("<i", -233))
        return b"".join(out), slots
    except (ValueError, IndexError, OverflowError, struct.error):
        return None


def weight_ops(rng: random.Random, size: int) -> list[list[Any]]:
    """How to damage a weights file of `size` bytes (the runner applies these to the real file)."""
    ops: list[list[Any]] = []
    tags = ["47 6b 30 01", "83 8b 34 01", "38 4b 0d 00", "56 c0 02 00", "01 00 00 00", "ff ff ff ff"]  # fp16, bf16, int8, ...
    for _ in range(rng.choice([1, 1, 2, 3])):
        r = rng.random()
        if r < 0.3:
            ops.append(["trunc", rng.randint(0, size)])
        elif r < 0.55:  # a weight blob's 4-byte tag: ncnn's fp16 / bf16 / int8 / quantized formats
            ops.append(["set", rng.randrange(0, max(size, 4), 4), rng.choice(tags).replace(" ", "")])
        elif r < 0.7:
            ops.append(["set", rng.randrange(max(size, 1)), bytes(rng.randrange(256) for _ in range(rng.choice([1, 4, 16]))).hex()])
        elif r < 0.8:
            ops.append(["ins", rng.randrange(max(size, 1)), bytes(rng.randrange(256) for _ in range(rng.choice([1, 3, 4, 64]))).hex()])
        elif r < 0.88:
            ops.append(["del", rng.randrange(max(size, 1)), rng.choice([1, 4, 100, 4096])])
        elif r < 0.95:
            ops.append(["ext", bytes(rng.randrange(256) for _ in range(rng.choice([1, 4, 1024]))).hex()])
        else:
            ops.append(["rand", bytes(rng.randrange(256) for _ in range(rng.choice([0, 3, 4, 64, 1100]))).hex()])
    return ops


# ---------------------------------------------------------------------------
# Cases.

@dataclass
class Case:
    header: dict[str, Any]
    param: bytes

    @property
    def id(self) -> int:
        return int(self.header["id"])

    def encode(self) -> bytes:
        return json.dumps(dict(self.header, np=len(self.param))).encode() + b"\n" + self.param

    def to_json(self) -> dict[str, Any]:
        try:
            text = self.param.decode()
            return {"header": self.header, "param_text": text}
        except UnicodeDecodeError:
            return {"header": self.header, "param_base64": base64.b64encode(self.param).decode()}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Case:
        param = d["param_text"].encode() if "param_text" in d else base64.b64decode(d["param_base64"])
        return Case(dict(d["header"]), param)


def choose(rng: random.Random, weighted: dict[str, float]) -> str:
    return rng.choices(list(weighted), weights=list(weighted.values()))[0]


# Cases whose weights come from a buffer ("good", "mut") that load them in place too, and
# where the .bin starts in the larger bytes object of a memoryview slice (a multiple of 4;
# now and then not, which load_model(copy=False) must refuse).
IN_PLACE_SHARE = 0.4
IN_PLACE_PADS = [0, 4, 8, 12, 16, 64]
UNALIGNED_PADS = [1, 2, 3, 6]


def in_place_spec(seed: int, cid: int, model: str) -> dict[str, Any] | None:
    """How case cid also loads its weights in place (the runner's in_place), or None. From a
    random stream of its own: the draws make_case makes stay what they were, so a case without
    "ip" keeps its content, and its key (case_key, loader_known_crashes.json)."""
    rng = random.Random(f"loader-ip-{seed}-{cid}")
    if model not in ("good", "mut") or rng.random() >= IN_PLACE_SHARE:
        return None
    via = rng.choice(["bytes", "mv", "mv"])
    pad = 0 if via == "bytes" else rng.choice(IN_PLACE_PADS) if rng.random() < 0.93 else rng.choice(UNALIGNED_PADS)
    return {"via": via, "pad": pad, "tail": rng.choice([0, 0, 4, 13, 256]) if via == "mv" else 0,
            "drop": rng.random() < 0.6, "real": rng.random() < 0.5}


def make_case(fams: dict[str, Family], typeindex: dict[str, int], seed: int, cid: int) -> Case:
    rng = random.Random(f"loader-{seed}-{cid}")
    fam = fams[choose(rng, {k: f.weight for k, f in fams.items()})]
    lines = [list(t) for t in fam.lines]
    muts = []
    for _ in range(rng.choice([0, 1, 1, 1, 1, 2, 2, 3])):
        mutator = rng.choices([m for _, m in MUTATORS], weights=[w for w, _ in MUTATORS])[0]
        mutator(rng, lines, list(fams.values()))
        muts.append(mutator.__name__[2:])
    pk = "bin" if rng.random() < 0.15 else "text"
    param = None
    slots: dict[str, int] = {}
    if pk == "bin":
        binary = to_param_bin(lines, typeindex)
        if binary is not None:
            param, slots = binary
            if rng.random() < 0.7:
                param = mutate_words(rng, param)
                muts.append("words")
    if param is None:
        pk = "text"
        param = render(lines).encode()
        if rng.random() < 0.15:
            param = mutate_bytes(rng, param)
            muts.append("bytes")
    via = choose(rng, {"buf": 0.4, "mem": 0.2 if pk == "text" else 0, "dr": 0.25, "path": 0.15})
    if fam.bin_path:
        model = choose(rng, {"good": 0.45, "mut": 0.45, "none": 0.05, "zeros": 0.05})
    else:
        model = choose(rng, {"zeros": 0.85, "mut": 0.1, "none": 0.05})
    shape = fam.shape
    if rng.random() < 0.1:
        shape = [rng.choice([1, 2, 3, 7, 8, 16, 28, 33]) for _ in range(rng.randint(1, 4))]
    name: str | int = fam.input if rng.random() < 0.93 else rng.choice(fam.blobs + ["nope", ""])
    r = rng.random()
    outs: list[str | int] = [fam.outputs[0]] if r < 0.8 else list(fam.outputs) if r < 0.9 else [rng.choice(fam.blobs + ["nope"])]
    if pk == "bin":  # blobs by number
        name = slots.get(str(name), rng.choice([-1, 9999]))
        outs = [slots.get(str(o), rng.choice([-1, 9999])) for o in outs]
    header = {
        "id": cid, "fam": fam.name, "muts": muts, "pk": pk, "via": via,
        "model": model, "mvia": choose(rng, {"buf": 0.5, "dr": 0.3, "path": 0.2}),
        "mops": weight_ops(rng, fam.bin_size) if model == "mut" else [],
        "opt": [rng.random() < 0.3, rng.random() < 0.7, rng.random() < 0.7],
        "in": [name, shape] if rng.random() < 0.97 else None, "out": outs,
        "force": rng.random() < 0.3, "fresh": rng.random() < 0.2,
        "check": cid % 25 == 0 or rng.random() < 0.05, "gc": rng.random() < 0.1,
    }
    in_place = in_place_spec(seed, cid, model)
    if in_place:
        header["ip"] = in_place
    return Case(header, param)


# ---------------------------------------------------------------------------
# Array cases: the parameter arrays of the layers the shape guard wraps, their length changed.
#
# Each case is one small model (an Input, the layer) whose array has `have` elements where
# the input makes the forward read `need`: shorter, one or two longer, zero, one (a broadcast
# for some types), far longer (data present) or absurdly long (the param says so, the .bin
# does not hold it). The .bin is changed with the array where the array lives there, or, in
# "keep" cases, left as the exact array's (the load then sees more or fewer bytes than the
# param asks for). The runner runs the exact model too (have == need): a mutated one must
# raise ValueError or MemoryError naming the layer, or give the exact one's outputs bit for
# bit (every array holds one value repeated, or a prefix of the exact one's, so a longer or
# broadcast array computes the same; reading past the end reads something else). Arrays
# short of what the forward reads must be refused; zero elements may also mean "none"
# (an Eltwise without coefficients sums plainly), so a run with zero is not compared
# (valgrind still sees a read past it). The rows of shape_rules.cpp's table of parameter
# arrays come with tests/test_param_arrays.py's models (reused, not copied here); the
# per-channel arrays (checked as a count of channels, shape_guard.cpp's READS_AXIS: BatchNorm,
# Scale, PReLU, Bias), the Quantize/Dequantize/Requantize scales and biases and Slice's lists
# are built below.

ArrayModel = tuple[list[str], bytes, list[tuple[int, ...]]]


def raw(n: int, v: float) -> bytes:
    """An array as ModelBin reads it with type 1: n raw float32 values, no flag word."""
    return struct.pack("<%df" % n, *[v] * n)


def along(need: int, dims: int) -> tuple[int, ...]:
    """An input of `dims` dims whose extent a per-channel array is read along is `need`: w of a
    vector, h of a matrix, c of an image or a volume (ncnn's BatchNorm, Scale, PReLU, Bias, and
    Quantize and Dequantize but for a vector; Slice's axis 0)."""
    return {1: (need,), 2: (3, need), 3: (3, 2, need), 4: (3, 2, 2, need)}[dims]


def _batchnorm(have: int, need: int, which: int, keep: int, dims: int) -> ArrayModel:
    # four arrays of `channels` (param 0): slope, mean, var, bias
    return [f"BatchNorm bn 1 1 data out 0={have} 1=0.001"], b"".join(
        raw(keep, v) for v in (1.5, 0.25, 2.0, 0.5)), [along(need, dims)]


def _scale(have: int, need: int, which: int, keep: int, dims: int) -> ArrayModel:
    return [f"Scale sc 1 1 data out 0={have} 1=1"], raw(keep, 1.5) + raw(keep, 0.5), [along(need, dims)]


def _prelu(have: int, need: int, which: int, keep: int, dims: int) -> ArrayModel:
    return [f"PReLU pr 1 1 data out 0={have}"], raw(keep, 0.25), [along(need, dims)]


def _bias(have: int, need: int, which: int, keep: int, dims: int) -> ArrayModel:
    return [f"Bias bi 1 1 data out 0={have}"], raw(keep, 0.5), [along(need, dims)]


def _quantize(have: int, need: int, which: int, keep: int, dims: int) -> ArrayModel:
    return [f"Quantize q 1 1 data out 0={have}"], raw(keep, 8.0), [along(need, dims)]


def _dequantize(have: int, need: int, which: int, keep: int, dims: int) -> ArrayModel:
    # scale (param 0) or bias (param 1), one per channel (the input's floats read as int32)
    sizes = [need, need]
    sizes[which] = have
    kept = [need, need]
    kept[which] = keep
    return ([f"Dequantize dq 1 1 data out 0={sizes[0]} 1={sizes[1]}"], raw(kept[0], 0.125) + raw(kept[1], 0.5),
            [along(need, dims)])


def _requantize(have: int, need: int, which: int, keep: int, dims: int) -> ArrayModel:
    # scale in (param 0), scale out (param 1) or bias (param 2), one per channel
    sizes, kept = [need] * 3, [need] * 3
    sizes[which], kept[which] = have, keep
    return ([f"Requantize rq 1 1 data out 0={sizes[0]} 1={sizes[1]} 2={sizes[2]}"],
            raw(kept[0], 0.125) + raw(kept[1], 4.0) + raw(kept[2], 0.5), [along(need, dims)])


def flagged(n: int, v: float) -> bytes:
    """An array as ModelBin reads it with type 0: a flag word (0: raw float32), n values."""
    return struct.pack("<I", 0) + raw(n, v)


def _gemm_a_inner(have: int, need: int, which: int, keep: int, dims: int) -> ArrayModel:
    # a constant A of 2 rows of K (param 9) values times the input B (K rows of 3)
    return [f"Gemm gemm 1 1 data out 4=1 5=0 6=0 7=2 8=0 9={have}"], flagged(2 * keep, 0.5), [(3, need)]


def _gemm_b_inner(have: int, need: int, which: int, keep: int, dims: int) -> ArrayModel:
    # the input A (2 rows of K) times a constant B of K (param 9) rows of 3
    return [f"Gemm gemm 1 1 data out 4=0 5=1 6=0 7=0 8=3 9={have}"], flagged(3 * keep, 0.5), [(need, 2)]


def _slice(have: int, need: int, which: int, keep: int, dims: int) -> ArrayModel:
    # Pieces along axis 0: `need` of them with slices (param 0, -233 each: equal parts), or
    # need + 1 with indices (param 2: where each piece but the last ends, need of them read)
    pieces = need if which == 0 else need + 1
    tops = " ".join([f"s{i}" for i in range(pieces - 1)] + ["out"])
    if which == 0:
        arr = "-23300=" + ",".join([str(have)] + ["-233"] * have)
    else:
        arr = "-23302=" + ",".join([str(have)] + [str(i + 1) for i in range(have)])
    return [f"Slice sl 1 {pieces} data {tops} {arr} 1=0"], b"", [along(2 * pieces, dims)]


class ArrayKind(NamedTuple):
    """A kind of array case: build(have, need, which, keep, dims) makes the model."""

    build: Callable[[int, int, int, int, int], ArrayModel]
    arrays: int  # how many arrays the layer has to pick from (which)
    broadcast: tuple[int, ...]  # lengths short of need that still compute the exact outputs
    layer: str  # its type
    name: str  # its name in the model
    dims: tuple[int, ...] = (3,)  # the input dims it is fuzzed with


LOCAL_ARRAYS: dict[str, ArrayKind] = {
    "BATCHNORM_CHANNELS": ArrayKind(_batchnorm, 1, (), "BatchNorm", "bn", (1, 2, 3, 4)),
    "SCALE_CHANNELS": ArrayKind(_scale, 1, (), "Scale", "sc", (1, 2, 3, 4)),
    "PRELU_SLOPES": ArrayKind(_prelu, 1, (1,), "PReLU", "pr", (1, 2, 3, 4)),
    "BIAS_CHANNELS": ArrayKind(_bias, 1, (), "Bias", "bi", (3, 4)),
    # (a vector's Quantize and Dequantize read scale 0 and bias 0 only, whatever their lengths:
    # ncnn's "assert scale_data_size == 1")
    "QUANTIZE_SCALES": ArrayKind(_quantize, 1, (1,), "Quantize", "q", (2, 3)),
    "DEQUANTIZE_ARRAYS": ArrayKind(_dequantize, 2, (1,), "Dequantize", "dq", (2, 3)),
    "REQUANTIZE_ARRAYS": ArrayKind(_requantize, 3, (1,), "Requantize", "rq", (2, 3)),
    "SLICE_LISTS": ArrayKind(_slice, 2, (), "Slice", "sl", (1, 2, 3, 4)),
    # (a constant operand's inner size K, which the guard checks against the input's: not a
    # row of the table, whose rows are C's)
    "GEMM_A_INNER": ArrayKind(_gemm_a_inner, 1, (), "Gemm", "gemm", (2,)),
    "GEMM_B_INNER": ArrayKind(_gemm_b_inner, 1, (), "Gemm", "gemm", (2,)),
}


def table_arrays() -> dict[str, ArrayKind]:
    """The rows of shape_rules.cpp's table of parameter arrays, each with the model
    tests/test_param_arrays.py builds for it (one array; its data follows its length)."""
    import test_param_arrays as tpa  # (tests/, on the path pytest and ci/testenv.py give)

    rows = tpa.table()
    assert rows and sorted(rows) == sorted(tpa.BUILDERS), "shape_rules.cpp's table and test_param_arrays.py disagree"

    def wrap(build: Callable[[int, int], ArrayModel]) -> Callable[[int, int, int, int, int], ArrayModel]:
        def f(have: int, need: int, which: int, keep: int, dims: int) -> ArrayModel:
            lines, _, shapes = build(have, need)
            return lines, build(keep, need)[1], shapes
        return f
    names = {"Eltwise": "sum", "Gemm": "gemm"}
    return {row: ArrayKind(wrap(tpa.BUILDERS[row]), 1, (), kind, names.get(kind, kind.lower()), (0,))
            for row, (kind, _, _) in rows.items()}


def array_kinds() -> dict[str, ArrayKind]:
    return {**table_arrays(), **LOCAL_ARRAYS}


# "far" keeps its data (a big model); "absurd" only says so in the param (the .bin holds `need`)
FAR, ABSURD = [1024, 4096], [1 << 20, 1 << 28, 2**31 - 1]
SENTINEL = 1021  # an absurd length is written over this one
# The guard follows a Slice's first 16 pieces (NCNN_MP_MORE_LIST, shape_guard.h) and refuses more:
# with indices a Slice of need + 1 pieces reads need of them.
NEED_MAX = {"SLICE_LISTS": 15}
NEED_MIN = {"ELTWISE_COEFFS": 2}  # (an Eltwise of one input is refused as such)


def array_param(lines: list[str]) -> bytes:
    layers = ["Input data 0 1 data"] + lines
    blobs = {b for line in layers for b in line.split()[4:4 + sum(map(int, line.split()[2:4]))]}
    return "\n".join(["7767517", f"{len(layers)} {len(blobs)}", *layers, ""]).encode()


def make_array_case(kinds: dict[str, ArrayKind], seed: int, cid: int) -> Case:
    """Array case cid of seed: the same on every run (its own random.Random)."""
    rng = random.Random(f"loader-arrays-{seed}-{cid}")
    row = rng.choice(sorted(kinds))
    build, arrays, broadcast, kind, name, dimses = kinds[row]
    dims = rng.choice(dimses)
    need = rng.choice([1, 2, 3, 4, 5, 8, 16]) if rng.random() < 0.9 else rng.randint(17, 64)
    need = max(min(need, NEED_MAX.get(row, need)), NEED_MIN.get(row, 1))
    which = rng.randrange(arrays)
    how = rng.choice(["short", "short", "one_less", "longer", "longer", "zero", "one", "far", "absurd"])
    have = {"short": rng.randint(0, max(0, need - 1)), "one_less": need - 1, "longer": need + rng.choice([1, 2, 5]),
            "zero": 0, "one": 1, "far": rng.choice(FAR), "absurd": rng.choice(ABSURD)}[how]
    keep = need if how == "absurd" or rng.random() < 0.2 else have  # the .bin's array: the exact one's
    if how == "absurd":  # (not built: the length said, the elements short of it)
        lines, weights, shapes = build(SENTINEL, need, which, keep, dims)
        lines = [re.sub(rf"=({SENTINEL})\b", f"={have}", line) for line in lines]
    else:
        lines, weights, shapes = build(have, need, which, keep, dims)
    ref_lines, ref_weights, _ = build(need, need, which, need, dims)
    header = {"id": cid, "fam": "arrays", "arr": row, "layer": kind, "name": name, "which": which, "how": how, "dims": dims,
              "have": have, "need": need, "keep": keep, "broadcast": list(broadcast),
              "w": weights.hex(), "ref": array_param(ref_lines).decode(), "ref_w": ref_weights.hex(),
              "shapes": [list(s) for s in shapes], "opt": [rng.random() < 0.3, rng.random() < 0.7, rng.random() < 0.7],
              "check": False, "gc": rng.random() < 0.1}
    return Case(header, array_param(lines))


def is_array_case(case: Case) -> bool:
    return "arr" in case.header


# ---------------------------------------------------------------------------
# Running cases; when a process dies, finding the case and where it crashed.

# Crashes inside ncnn itself (KNOWN_NCNN_ISSUES.md): ncnn's layers trust the shapes
# and parameters a model gives them, and c_api.h shows the binding neither a net's layers
# nor its blob shapes, so no check of ncnn_mp's can make a malformed model safe there.
# A crash whose innermost frame of our code is ncnn's (ncnn::...), reached through ncnn
# running a layer, is known: the key is the issue heading in KNOWN_NCNN_ISSUES.md. A
# crash anywhere else (ncnn_mp, MicroPython, ncnn's C API, ncnn's loaders) is a finding.
KNOWN_CLASSES = {
    "N1": ("ncnn::NetPrivate::do_forward_layer", "ncnn::NetPrivate::forward_layer"),  # a layer's forward
    "N2": ("ncnn::Net::load_model",),  # a layer's load_model or create_pipeline
}
# Where a crash only shows that the heap was already damaged: valgrind finds the writer.
HEAP_VICTIMS = re.compile(r"^ncnn::(PoolAllocator::|UnlockedPoolAllocator::|fastFree|fastMalloc|Mat::release|"
                          r"NetPrivate::do_forward_layer|NetPrivate::forward_layer|Extractor::)")


# ncnn's own machinery rather than a layer's code: a crash there is not the known issue
# (the lightmode re-run of a freed Input blob crashed in NetPrivate::do_forward_layer, and
# ncnn_mp could guard against it).
NCNN_MACHINERY = re.compile(r"^ncnn::(NetPrivate|Net|Extractor|ModelBin\w*|ParamDict|DataReader\w*)::")


def known_class(site: str, frames: list[str]) -> str:
    if not site.startswith("ncnn::") or NCNN_MACHINERY.match(site):
        return ""
    for key, entries in KNOWN_CLASSES.items():
        if any(re.search(re.escape(e) + r" ?\(", f) for f in frames for e in entries):
            return key
    return ""


# The cases of the CI budget (seed 1) known to crash inside ncnn, with their site:
# skipped rather than run, so that the short CI run needs neither gdb nor replays. Each
# is keyed by its content (case_key), not by its number: with another set of models (no
# ../shared/models, another bench net) case N is another case, which must run.
# `loader_fuzz.py --cases 3000 --write-known` refreshes it after the generator changes.
KNOWN_CASES_FILE = FUZZ / "loader_known_crashes.json"


def normalise_site(site: str) -> str:
    """ncnn::ConvolutionDepthWise_x86_avx::forward -> ncnn::ConvolutionDepthWise::forward."""
    return re.sub(r"_(?:x86|arm|mips|loongarch|riscv|vulkan)\w*?(?=::)", "", site)


def case_key(fams: dict[str, Family], case: Case) -> str:
    """What identifies a case by what it runs: its header (family, mutations, how param and
    weights are loaded and damaged, input, outputs, options, its number), its param bytes,
    and its family's model files. Two cases with one key run the same."""
    h = hashlib.sha256(fams[case.header["fam"]].digest.encode())
    h.update(json.dumps(case.header, sort_keys=True).encode() + b"\n" + case.param)
    return h.hexdigest()[:24]


@dataclass
class KnownCases:
    """loader_known_crashes.json: per seed, the model set it was made with (family ->
    digest) and the known cases (key -> case number, family, site)."""

    data: dict[str, Any]

    @staticmethod
    def load() -> KnownCases:
        return KnownCases(json.loads(KNOWN_CASES_FILE.read_text()) if KNOWN_CASES_FILE.exists() else {})

    def sites(self) -> dict[str, str]:
        """Every known key (of any seed: a key is content, whatever made it) -> its site."""
        return {k: v["site"] for entry in self.data.values() for k, v in entry["cases"].items()}

    def expected(self, seed: int, fams: dict[str, Family], start: int, stop: int) -> dict[str, int]:
        """The keys this run must meet (key -> case number): those of seed's cases in
        start..stop-1, when the models are the ones the list was made with (other models
        make other cases). A key not met means the generator changed under the list."""
        entry = self.data.get(str(seed))
        if entry is None or entry["families"] != {k: f.digest for k, f in fams.items()}:
            return {}
        return {k: v["case"] for k, v in entry["cases"].items() if start <= v["case"] < stop}

    def write(self, seed: int, fams: dict[str, Family], cases: dict[str, Case], sites: dict[int, str]) -> None:
        self.data[str(seed)] = {
            "families": {k: f.digest for k, f in sorted(fams.items())},
            "cases": {key: {"case": c.id, "fam": c.header["fam"], "muts": c.header["muts"], "site": sites[c.id]}
                      for key, c in sorted(cases.items(), key=lambda kc: kc[1].id)}}
        # One line a case, in case order: a diff of the file reads as cases come and go.
        seeds = []
        for sd, entry in sorted(self.data.items(), key=lambda se: int(se[0])):
            rows = ",\n".join(f"   {json.dumps(k)}: {json.dumps(v)}" for k, v in entry["cases"].items())
            seeds.append(f' {json.dumps(sd)}: {{\n  "families": {json.dumps(entry["families"])},\n'
                         f'  "cases": {{\n{rows}\n  }}\n }}')
        KNOWN_CASES_FILE.write_text("{\n" + ",\n".join(seeds) + "\n}\n")


def batch_payload(fams: dict[str, Family], cases: list[Case]) -> bytes:
    checked = sorted({c.header["fam"] for c in cases if c.header["check"]})
    head = json.dumps({"families": {k: f.info() for k, f in fams.items()}, "checked": checked}).encode() + b"\n"
    return head + b"".join(c.encode() for c in cases)


def run_cases(mp: MicroPython, fams: dict[str, Family], cases: list[Case], timeout: float | None = None) -> Run:
    slow = 40 if mp.valgrind else 1
    return run_batch(mp, RUNNER, batch_payload(fams, cases), timeout or slow * (30 + 0.25 * len(cases)))


def in_place_results(run: Run) -> dict[int, str]:
    """The runner's "I <id> <outcome>" lines: case -> how its in-place load compared."""
    out = {}
    for line in run.extra:
        kind, _, rest = line.partition(" ")
        if kind == "I":
            cid, _, outcome = rest.partition(" ")
            out[int(cid)] = outcome
    return out


def array_results(run: Run) -> dict[int, str]:
    """The runner's "A <id> ok|BAD <why>" lines: array case -> its verdict."""
    out = {}
    for line in run.extra:
        kind, _, rest = line.partition(" ")
        if kind == "A":
            cid, _, verdict = rest.partition(" ")
            out[int(cid)] = verdict
    return out


def bad(run: Run) -> str | None:
    """What is wrong with a finished run: it died, a Net failed its health check, weights
    loaded in place did not do what the same bytes copied did, or an array case neither
    raised naming its layer nor gave the exact array's outputs."""
    if run.died:
        return run.how()
    unhealthy = [f"{cid} {v}" for cid, v in run.health.items() if v != "ok"]
    if unhealthy:
        return "Net unusable after a failure: " + "; ".join(unhealthy[:3])
    wrong = [f"{cid} {v[4:]}" for cid, v in in_place_results(run).items() if v.startswith("BAD")]
    if wrong:
        return "in place not as copied: " + "; ".join(wrong[:3])
    arrays = [f"{cid} {v[4:]}" for cid, v in array_results(run).items() if v != "ok"]
    if arrays:
        return "array case wrong: " + "; ".join(arrays[:3])
    if run.done != "0":
        return f"{run.done} custom layer(s) still alive at the end"
    return None


@dataclass
class Finding:
    how: str
    cases: list[Case]
    site: str = ""      # where it crashed (gdb), normalised
    known: str = ""     # the KNOWN_NCNN_ISSUES.md heading when the site is a known ncnn fault
    path: Path | None = None

    def describe(self) -> str:
        where = f" at {self.site}" if self.site else ""
        saved = f" -> {self.path}" if self.path else ""
        return f"{self.how}{where}: case(s) {[c.id for c in self.cases]}{saved}"


@dataclass
class Stats:
    total: int = 0  # cases generated (run, or skipped as known)
    cases: int = 0  # cases that ended (success or exception)
    outcomes: Counter[str] = field(default_factory=Counter)
    exceptions: Counter[str] = field(default_factory=Counter)
    known: Counter[str] = field(default_factory=Counter)  # known ncnn crash site -> cases
    known_cases: dict[int, str] = field(default_factory=dict)  # case number -> site
    known_unmet: dict[str, int] = field(default_factory=dict)  # listed keys this run never made -> case number
    skipped: int = 0  # cases skipped as listed known crashes (the rest of `known` crashed in this run)
    health_checks: int = 0
    in_place: Counter[str] = field(default_factory=Counter)  # outcome of the in-place loads ("ip" cases)
    arrays: Counter[str] = field(default_factory=Counter)  # array cases: "<row> <outcome>"
    array_verdicts: Counter[str] = field(default_factory=Counter)  # array cases: ok / BAD
    array_runs: Counter[str] = field(default_factory=Counter)  # array cases that ran: "<row> longer|exact|shorter"
    findings: list[Finding] = field(default_factory=list)
    processes: int = 0
    seconds: float = 0.0

    def add(self, run: Run) -> None:
        self.processes += 1
        self.health_checks += len(run.health)
        for outcome in in_place_results(run).values():
            self.in_place["BAD" if outcome.startswith("BAD") else outcome] += 1
        for verdict in array_results(run).values():
            self.array_verdicts["BAD" if verdict.startswith("BAD") else verdict] += 1
        for outcome in run.results.values():
            self.cases += 1
            first = outcome.split("/")[0]
            self.outcomes["ok" if first == "ok" else first.split(":")[0] + " failed"] += 1
            for part in outcome.split("/"):
                if part != "ok" and not part.endswith(":ok"):
                    self.exceptions[part.split(":")[1]] += 1

    def report(self) -> str:
        crashed = self.total - self.cases
        out = [f"loader fuzzer: {self.total} cases: {self.cases} ended normally, {crashed} crashed ({sum(self.known.values())} "
               f"inside ncnn at a known site, {self.skipped} of them skipped as listed in {KNOWN_CASES_FILE.name}); "
               f"{self.processes} processes, {self.seconds:.0f} s; {self.health_checks} health checks"]
        out.append("outcomes (first failing stage): " + ", ".join(f"{k} {v}" for k, v in self.outcomes.most_common()))
        out.append("exceptions by type (every stage tried): " + ", ".join(f"{k} {v}" for k, v in self.exceptions.most_common()))
        out.append(f"weights also loaded in place: {sum(self.in_place.values())} cases, as copied: "
                   + (", ".join(f"{k} {v}" for k, v in self.in_place.most_common()) or "none"))
        if self.arrays:
            out.append(f"array cases: {sum(self.arrays.values())}, verdicts: "
                       + ", ".join(f"{k} {v}" for k, v in self.array_verdicts.most_common()))
            out.append("array cases by row and outcome: " + ", ".join(f"{k} {v}" for k, v in sorted(self.arrays.items())))
            out.append("array cases that ran, by row and length: "
                       + ", ".join(f"{k} {v}" for k, v in sorted(self.array_runs.items())))
        out.append("known ncnn crashes by site: " + (", ".join(f"{k} {v}" for k, v in self.known.most_common()) or "none"))
        if self.known_unmet:
            out.append(f"known cases of loader_known_crashes.json this run did not make (the generator changed?): "
                       f"{len(self.known_unmet)}, case(s) {sorted(self.known_unmet.values())}")
        out.append(f"findings: {len(self.findings)}")
        out += ["  " + f.describe() for f in self.findings]
        return "\n".join(out)


def type_indexes(mp: MicroPython) -> dict[str, int]:
    """ncnn's type index of every layer type (from the firmware itself), custom ones at 256 + i."""
    src = "import json, ncnn_mp\nprint(json.dumps({t: ncnn_mp.Layer.type_to_index(t) for t in %r}))\n" % LAYER_TYPES
    table = {k: v for k, v in json.loads(mp.check(src)).items() if v >= 0}
    table.update({t: CUSTOM_BIT + i for i, t in enumerate(CUSTOM_TYPES)})
    return table


def shrink_param(param: bytes, fails: Callable[[bytes], bool]) -> bytes:
    """Fewer layer lines (the header's layer count kept in step), then fewer parameters."""
    text = param.decode(errors="surrogateescape")
    lines = text.splitlines()
    head = lines[1].split() if len(lines) > 1 else []
    if len(head) == 2 and all(t.lstrip("-").isdigit() for t in head):
        def render_(ls: list[str]) -> bytes:
            return "\n".join([lines[0], f"{len(ls)} {head[1]}"] + ls).encode(errors="surrogateescape") + b"\n"
        body = shrink(lines[2:], lambda ls: fails(render_(ls)), budget=150)
        for i, line in enumerate(body):  # then each layer's parameters, one at a time
            toks = line.split()
            parts = layer_parts(toks)
            j = len(toks) - len(parts[2]) if parts else len(toks)
            while j < len(toks):
                fewer = toks[:j] + toks[j + 1:]
                if fails(render_(body[:i] + [" ".join(fewer)] + body[i + 1:])):
                    toks = fewer
                    body[i] = " ".join(toks)
                else:
                    j += 1
        return render_(body)
    keep = shrink(text.splitlines(keepends=True), lambda ls: fails("".join(ls).encode(errors="surrogateescape")), budget=150)
    return "".join(keep).encode(errors="surrogateescape")


class LoaderFuzzer:
    """Runs cases of one seed and looks into every process that dies.

    sym: makes the same firmware built with symbols (profile memcheck), for gdb's
    backtraces, called on the first crash; without it a crash cannot be told known, and
    every crash is a finding."""

    def __init__(self, mp: MicroPython, fams: dict[str, Family], seed: int,
                 sym: Callable[[], MicroPython] | None = None, minimise: bool = False, save: bool = True,
                 log: Callable[[str], None] = lambda s: None) -> None:
        self.mp, self.fams, self.seed, self.get_sym = mp, fams, seed, sym
        self._sym: MicroPython | None = None
        self.minimise, self.save, self.log = minimise, save, log
        self.typeindex = type_indexes(mp)
        self.stats = Stats()
        self.known_list = KnownCases.load()
        self.skip = self.known_list.sites()  # case key -> site
        self.kinds: dict[str, ArrayKind] | None = None  # the array cases' kinds (array_kinds), made on first use

    def case(self, cid: int) -> Case:
        return make_case(self.fams, self.typeindex, self.seed, cid)

    def array_case(self, cid: int) -> Case:
        if self.kinds is None:
            self.kinds = array_kinds()
        return make_array_case(self.kinds, self.seed, cid)

    def fails_like(self, how: str) -> Callable[[list[Case]], bool]:
        kind = how.split(" ")[0]

        def fails(cs: list[Case]) -> bool:
            b = bad(run_cases(self.mp, self.fams, cs, timeout=60))
            return b is not None and b.split(" ")[0] == kind
        return fails

    def locate(self, cases: list[Case], run: Run, how: str) -> list[Case]:
        """The case, or the shortest run of cases before it, that goes wrong the same way."""
        ids = [c.id for c in cases]
        suspect = run.suspect()
        upto = ids.index(suspect) + 1 if suspect is not None else len(cases)
        if how.startswith("Net unusable"):
            upto = ids.index(min(cid for cid, v in run.health.items() if v != "ok")) + 1
        elif how.startswith("in place"):
            upto = ids.index(min(cid for cid, v in in_place_results(run).items() if v.startswith("BAD"))) + 1
        elif how.startswith("array case"):
            upto = ids.index(min(cid for cid, v in array_results(run).items() if v != "ok")) + 1
        prefix = cases[:upto]
        fails = self.fails_like(how)
        k = 1
        while k < len(prefix) and not fails(prefix[-k:]):  # an earlier case may have set it up
            k *= 4
        window = prefix[-k:]
        return window if len(window) == 1 else shrink(window, fails, budget=40)

    def symbols(self) -> MicroPython | None:
        """The firmware with symbols for gdb and valgrind (made on first use), if given."""
        if self._sym is None and self.get_sym is not None:
            self._sym = self.get_sym()
        return self._sym

    @staticmethod
    def verdict(bt: Backtrace | None) -> tuple[str, str]:
        """(site, known issue key or "") of a stack; ("", "") when there is none."""
        if bt is None or not bt.frames:
            return "", ""
        site = normalise_site(bt.site)
        return site, known_class(site, bt.frames)

    def classify(self, culprit: list[Case], how: str) -> tuple[str, str]:
        """(site, known issue key or "") of a reproducible failure: from the sanitizer's own
        report on the sanitizer firmware; else a wrong answer (after a failure, or in place
        against copied) from the first invalid access valgrind sees (an out-of-bounds
        access's doing: a layer reading past its weights reads other bytes in place), and a crash
        through gdb (and valgrind, when gdb only sees the heap's victim)."""
        if sanitized(self.mp):
            return self.verdict(sanitizer_report(run_cases(self.mp, self.fams, culprit).stderr))
        sym = self.symbols()
        if sym is None:
            return "", ""
        payload = batch_payload(self.fams, culprit)
        if how.startswith(("Net unusable", "in place", "array case")):  # wrong floats: whose read went astray
            return self.verdict(first_memory_error(sym, RUNNER, payload, timeout=600))
        bt = backtrace(sym, RUNNER, payload)
        victim = bt.heap_corruption or HEAP_VICTIMS.match(bt.site)
        if victim or not known_class(normalise_site(bt.site), bt.frames):
            first = first_memory_error(sym, RUNNER, payload, timeout=180)
            if first is not None and first.frames:
                bt = first
        site = normalise_site(bt.site)  # (a stack gdb could not take still names its site "?")
        return site, known_class(site, bt.frames)

    def shrink_cases(self, cases: list[Case], how: str) -> list[Case]:
        fails = self.fails_like(how)
        for i, c in enumerate(cases):
            if is_array_case(c):  # (one layer already: nothing to take away)
                continue

            def swap(h: dict[str, Any], p: bytes) -> list[Case]:
                return cases[:i] + [Case(h, p)] + cases[i + 1:]
            for model in ("none", "zeros"):  # weights that need no model file
                h = dict(c.header, model=model, mops=[])
                if c.header["model"] != model and fails(swap(h, c.param)):
                    c = Case(h, c.param)
            if c.header["pk"] == "text":
                c = Case(c.header, shrink_param(c.param, lambda p: fails(swap(c.header, p))))
            cases = swap(c.header, c.param)
        return cases

    def investigate(self, cases: list[Case], run: Run, how: str) -> None:
        if "alive at the end" in how and bad(run_cases(self.mp, self.fams, cases)) is None:
            # The GC scans the C stack conservatively: a stale word can keep one Net alive
            # past the final collection. Only a count that comes back on a rerun is a leak.
            self.log(f"cases {cases[0].id}..{cases[-1].id}: {how}, not on a rerun (a stale stack word)")
            return
        self.log(f"cases {cases[0].id}..{cases[-1].id}: {how}; locating the case")
        culprit = self.locate(cases, run, how)
        f = Finding(how, culprit)
        if not how.startswith("hang") and "alive at the end" not in how:
            f.site, f.known = self.classify(culprit, how)
        if f.known:  # counted, not shrunk: KNOWN_NCNN_ISSUES.md has small reproducers
            self.stats.known[f"{f.known} {f.site}"] += 1
            # The last case of the culprit is the one to skip: those before it that set it
            # up (a shared Net) end normally by themselves, and still run. (Not the case
            # the process died in: a Net can crash when collected, in the next case.)
            self.stats.known_cases[culprit[-1].id] = f"{f.known} {f.site}"
            self.log(f"  known ncnn fault {f.known}: {f.describe()}")
            return
        if self.minimise:
            f.cases = self.shrink_cases(culprit, how)
        if self.save:
            name = f"loader-{'arrays-' if is_array_case(culprit[-1]) else ''}{self.seed}-{culprit[-1].id}"
            f.path = save_regression(name, {
                "found": f.how, "site": f.site, "seed": self.seed,
                "families": sorted({c.header["fam"] for c in f.cases if not is_array_case(c)}),
                "cases": [c.to_json() for c in f.cases]})
        self.stats.findings.append(f)
        self.log("  FINDING " + f.describe())

    def run_batch(self, cases: list[Case], run: Run | None = None) -> None:
        """Run cases in as many processes as it takes: after a death, on from the next case
        (`run`: how the first process, already run, ended)."""
        while cases:
            run = run or run_cases(self.mp, self.fams, cases)
            self.stats.add(run)
            arrays = {c.id: c.header for c in cases if is_array_case(c)}
            for cid, outcome in run.results.items():
                if cid in arrays:
                    h = arrays[cid]
                    self.stats.arrays[f"{h['arr']} {outcome}"] += 1
                    if outcome == "ok":
                        rel = "longer" if h["have"] > h["need"] else "exact" if h["have"] == h["need"] else "shorter"
                        self.stats.array_runs[f"{h['arr']} {rel}"] += 1
            how = bad(run)
            if how is None:
                return
            self.investigate(cases, run, how)
            if not run.died:
                return
            # On with the cases that did not start: a process can also die between cases
            # (in a health check, or collecting a Net), with no case running.
            started = set(run.started)
            if not started:  # it died before its first case (the finding says how): no progress to make
                return
            cases = [c for c in cases if c.id not in started]
            run = None

    def fuzz(self, count: int, batch: int = 400, start: int = 0, jobs: int = 1,
             only: Callable[[Case], bool] | None = None, arrays: bool = False) -> Stats:
        """Cases start..start+count-1 (those `only` keeps, if given), made batch by batch;
        arrays: the array cases of those numbers instead (make_array_case)."""
        t0 = time.monotonic()
        listed = self.skip and only is None and not arrays
        unmet = self.known_list.expected(self.seed, self.fams, start, start + count) if listed else {}

        def make(first: int) -> list[Case]:
            cases = []
            for cid in range(first, min(first + batch, start + count)):
                c = self.array_case(cid) if arrays else self.case(cid)
                if only is not None and not only(c):
                    continue
                self.stats.total += 1
                key = "" if arrays else case_key(self.fams, c)
                if key in self.skip:
                    self.stats.known[self.skip[key]] += 1
                    self.stats.known_cases[cid] = self.skip[key]
                    self.stats.skipped += 1
                    unmet.pop(key, None)
                else:
                    cases.append(c)
            return cases

        firsts = range(start, start + count, batch)
        if jobs == 1:
            for first in firsts:
                self.run_batch(make(first))
                self.progress(t0)
        else:
            # Batches run side by side, `jobs` at a time; a process that died is looked
            # into, and the rest of its batch run, one at a time.
            def first_pass(cases: list[Case]) -> tuple[list[Case], Run]:
                return cases, run_cases(self.mp, self.fams, cases)
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                pending: list[Any] = []
                todo: list[int | None] = [*firsts, *[None] * jobs]  # None: no more to start, drain
                for nxt in todo:
                    if nxt is not None:
                        pending.append(pool.submit(first_pass, make(nxt)))
                    if len(pending) >= jobs or (nxt is None and pending):
                        cases, run = pending.pop(0).result()
                        self.run_batch(cases, run)
                        self.progress(t0)
        self.stats.seconds = time.monotonic() - t0
        self.stats.known_unmet = unmet
        return self.stats

    def progress(self, t0: float) -> None:
        if self.stats.processes % 10 == 0:
            self.log(f"{self.stats.cases} cases, {sum(self.stats.known.values())} known ncnn crashes, "
                     f"{len(self.stats.findings)} findings, {time.monotonic() - t0:.0f} s")


def replay(mp: MicroPython, fams: dict[str, Family], path: Path) -> str | None:
    """Run a saved regression; what goes wrong, or None."""
    data = json.loads(path.read_text())
    return bad(run_cases(mp, fams, [Case.from_json(c) for c in data["cases"]]))


def write_known(fz: LoaderFuzzer) -> None:
    """Record the known crashes of fz's run, keyed by content, for its seed."""
    cases = {case_key(fz.fams, c): c for c in map(fz.case, fz.stats.known_cases)}
    fz.known_list.write(fz.seed, fz.fams, cases, fz.stats.known_cases)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="first case number")
    ap.add_argument("--batch", type=int, default=400, help="cases per MicroPython process")
    ap.add_argument("--jobs", type=int, default=1, help="processes at a time")
    ap.add_argument("--no-save", action="store_true", help="do not write regressions")
    ap.add_argument("--no-minimise", action="store_true", help="do not shrink what is found")
    ap.add_argument("--write-known", action="store_true", help=f"record the known crashes in {KNOWN_CASES_FILE.name}")
    ap.add_argument("--replay", type=Path, nargs="*", help="run saved regression files (all: no file named) instead")
    ap.add_argument("--arrays", type=int, default=None,
                    help="array cases (parameter arrays of the wrapped layers) after the others (default: a tenth of --cases)")
    args = ap.parse_args(argv)
    mp = firmware()
    fams = discover_families()
    print("families:", ", ".join(fams), flush=True)
    if args.replay is not None:
        failed = 0
        for p in args.replay or regressions("loader"):
            how = replay(mp, fams, p)
            print(p.name, how or "ok")
            failed += how is not None
        return 1 if failed else 0
    def fuzzer() -> LoaderFuzzer:
        return LoaderFuzzer(mp, fams, args.seed, sym=lambda: firmware(valgrind=True), minimise=not args.no_minimise,
                            save=not args.no_save, log=lambda s: print(s, flush=True))

    fz = fuzzer()
    if not args.write_known:
        stats = fz.fuzz(args.cases, args.batch, args.start, args.jobs) if args.cases else None
        if stats:
            print(stats.report(), flush=True)
        arrays = args.cases // 10 if args.arrays is None else args.arrays
        if arrays:
            fa = fuzzer()
            astats = fa.fuzz(arrays, args.batch, args.start, args.jobs, arrays=True)
            print(astats.report())
        return 1 if (stats and stats.findings) or (arrays and astats.findings) else 0
    # A run that skips nothing, then runs that skip what is listed, until one meets no
    # crash beyond the list: a skipped case changes what the next cases of its process
    # meet, so the CI budget (which skips) can crash where the first run did not.
    fz.skip = {}
    for attempt in range(1, 5):
        stats = fz.fuzz(args.cases, args.batch, args.start, args.jobs)
        print(stats.report())
        write_known(fz)
        new = sum(stats.known.values()) - stats.skipped
        print(f"--write-known run {attempt}: {stats.skipped} listed cases skipped, {new} more known crashes listed", flush=True)
        if stats.findings or new == 0:
            break
        fz = fuzzer()  # with the list as written
    return 1 if stats.findings or new else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

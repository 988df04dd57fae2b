# SPDX-License-Identifier: MIT
"""API sequence fuzzer: random sequences of ncnn_mp's public calls, with random arguments,
on the Unix firmware. Every call must end in a result or a Python exception, every
sequence must leave no custom layer alive once its objects are dropped, and the heap must
come back to where it was.

    python3 -m ci.tool fuzz-api --sequences 2000 --seed 1 [--batch 100]    (make fuzz-api)

The calls come from ncnn_mp.pyi, read with `ast`: every class, constructor, method,
static method, property and attribute it declares, with arguments made from the
annotations (a method added to the stub is fuzzed without touching this file), some of
them of the wrong type on purpose. Parameter names steer the values where a random one
would only ever be refused (dims, blob names, pixel formats, param text). Interleaved:
nets built with custom layers written to misbehave (raise, return wrong things, keep
lent objects, collect garbage, call back into ncnn_mp from inside ncnn), registered
through creators that return odd things. And nets whose weights stay in the buffer they
were loaded from (load_model(copy=False)): buffers of every kind, dropped, collected and
reused under the nets; a Python layer that keeps the Mats its ModelBin hands out; a Mat
buffer given new storage; a net loaded in place from a Mat ncnn lends a Python layer.

A process that crashes or hangs is replayed to find the sequence, then the step, the
sequence is shrunk (delta debugging over its steps) and saved under
tests/fuzz/regressions/api-*.json; tests/test_fuzz_api.py replays every saved one.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import struct
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

from fuzzlib import (FUZZ, TESTS, MicroPython, Run, firmware, limited, parse_results,
                     regressions, run_batch, sanitized, save_regression, shrink)

RUNNER = FUZZ / "api_runner.py"
STUB = TESTS.parent / "ncnn_mp.pyi"

# Each process runs its batch four times over. The first passes take every table that
# only grows to a high-water mark (interned strings, the dict of GC roots for custom
# layers, dicts that keep their size) to it; measured, one pass is not always enough (a
# batch jumped by 15 KiB once, on its second pass, and then stayed put over four more),
# two have been. So the heap after the later passes must be where it was after the
# second, give or take what the GC's conservative scan happens to keep: the figure
# swings by up to 6 KiB either way from pass to pass, with no trend. A leak raises every
# later pass, so the growth is the lowest later figure's: it shows once it passes 8 KiB
# per batch, 80 B per sequence in a 100-sequence batch. Under the sanitizers the scan
# keeps more (larger frames): one batch's 12 passes read 59, 61, 59, 75, 61, 62, 77, 60,
# 59, 61, 59, 58 KiB, so the slack there is three times as large; the plain and valgrind
# runs are the ones that measure leaks finely.
HEAP_SLACK = 8192
PASSES = 4


def heap_slack(mp: MicroPython) -> int:
    return 3 * HEAP_SLACK if sanitized(mp) else HEAP_SLACK

Spec = Any  # a value as the runner's val() reads it (JSON)


# ---------------------------------------------------------------------------
# The stub.

@dataclass
class Param:
    name: str
    ann: ast.expr | None
    kind: str  # "pos", "kw" (keyword-only) or "var" (*args)
    optional: bool


@dataclass
class Member:
    name: str
    kind: str  # "method", "static", "property", "attr", "init"
    overloads: list[list[Param]] = field(default_factory=list)
    ann: ast.expr | None = None  # an attribute's type


@dataclass
class Stub:
    functions: dict[str, Member]
    classes: dict[str, dict[str, Member]]


def params_of(fn: ast.FunctionDef, skip_first: bool) -> list[Param]:
    a = fn.args
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    out = [Param(p.arg, p.annotation, "pos", d is not None) for p, d in zip(pos, defaults)]
    if skip_first:
        out = out[1:]
    if a.vararg:
        out.append(Param(a.vararg.arg, a.vararg.annotation, "var", True))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append(Param(p.arg, p.annotation, "kw", d is not None))
    return out


def read_stub(path: Path = STUB) -> Stub:
    tree = ast.parse(path.read_text())
    stub = Stub({}, {})

    def add_fn(table: dict[str, Member], fn: ast.FunctionDef, in_class: bool) -> None:
        decos = {ast.unparse(d) for d in fn.decorator_list}
        kind = ("property" if "property" in decos else "static" if decos & {"staticmethod", "classmethod"}
                else "init" if fn.name == "__init__" else "method")
        m = table.setdefault(fn.name, Member(fn.name, kind))
        if kind != "property":
            m.overloads.append(params_of(fn, skip_first=in_class))

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            add_fn(stub.functions, node, False)
        elif isinstance(node, ast.ClassDef):
            members: dict[str, Member] = {}
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    add_fn(members, item, True)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members[item.target.id] = Member(item.target.id, "attr", ann=item.annotation)
            stub.classes[node.name] = members
    return stub


# ---------------------------------------------------------------------------
# Values.

SMALL_INTS = [0, 1, 2, 3, 4, 8, 16, -1]
ODD_INTS = [-2, 31, 32, 255, 256, 1023, 65535, 65536, 2**31 - 1, -(2**31), 2**31, 2**63, -(2**70)]
FLOATS = ["0.0", "1.5", "-2.0", "nan", "inf", "-inf", "1e30"]
BLOBS = ["data", "out", "a", "b", "nope", "", 0, 1, 2, 3, -1, 99]
LAYER_TYPES = ["ReLU", "Softmax", "Convolution", "InnerProduct", "Pooling", "Concat", "Split", "Input", "Sigmoid",
               "BinaryOp", "Reshape", "NoSuch", ""]
CUSTOM = ["F0", "F1", "F2", "F3"]
PIXELS = ["PIXEL_RGB", "PIXEL_BGR", "PIXEL_GRAY", "PIXEL_RGBA", "PIXEL_RGB2GRAY", "PIXEL_BGR2RGB", "PIXEL_GRAY2RGBA",
          "PIXEL_RGBA2BGR"]
BORDERS = ["BORDER_CONSTANT", "BORDER_REPLICATE", "BORDER_REFLECT"]
# What a custom layer makes from the Mats ncnn lends it, to keep past the call (the
# runner's make_derived), each with the lent Option or a fresh one.
DERIVATIONS = ["reshape", "reshape2", "batch", "flatten", "packing", "border0", "border1", "cut0", "cut1", "clone",
               "relu", "flatten_layer", "mv", "data"]
# Results made with an Option whose allocators are Allocators (the runner's al_make).
AL_KINDS = ["relu", "relu_inplace", "sigmoid", "concat", "flatten", "packing", "border", "clone", "reshape", "mat"]
AL_SHAPES = [[8], [16], [4, 3], [4, 2, 3], [5, 3, 2], [3, 2, 2, 2], [2, 2, 4]]
FLAGS = ["support_packing", "support_bf16_storage", "support_fp16_storage", "support_any_packing", "support_vulkan",
         "support_vulkan_packing", "support_vulkan_any_packing"]

# Param texts the sequences load (the runner gets them in the batch header). The custom
# types F0..F3 are registered by the sequence, with behaviours of its own.
TEXTS = [
    "7767517\n2 2\nInput data 0 1 data 0=4 1=2 2=1\nF0 f0 1 1 data out 0=1\n",
    "7767517\n3 3\nInput data 0 1 data\nF0 f0 1 1 data a\nF1 f1 1 1 a out\n",
    "7767517\n3 4\nInput data 0 1 data\nF2 f2 1 2 data a b\nConcat c 2 1 a b out\n",
    "7767517\n3 4\nInput data 0 1 data\nSplit s 1 2 data a b\nF3 f3 2 1 a b out\n",
    "7767517\n3 3\nInput data 0 1 data\nReLU r 1 1 data a\nF1 f1 1 1 a out 0=3 1=0.5\n",
    "7767517\n2 2\nInput data 0 1 data\nF3 f3 1 1 data out -23300=2,1.5,2.5 2=7\n",
    "7767517\n3 3\nInput data 0 1 data\nF0 f0 1 1 data a\nF0 g0 1 1 a out\n",
    "7767517\n3 3\nInput data 0 1 data\nF1 f1 1 1 data a\nSoftmax out 1 1 a out\n",
    "7767517\n2 2\nInput data 0 1 data\nReLU r 1 1 data out\n",
    "7767517\n1 1\nF0 f0 0 1 out\n",
    "not a param\n",
]

# Nets whose weights the "wip" steps load in place (the runner's do_wip): param text, and the
# chunks of weights its layers read, in order: ["raw", n] floats (ModelBin type 1), ["tag", n]
# (type 0: a tag, then fp32 or fp16 data). KW is the runner's Python layer that keeps the Mat
# its ModelBin hands out (0= count, 1= type); MemoryData and Bias read their weights at every
# forward (ncnn's x86 InnerProduct repacks its own when the pipeline is made).
WIP_NETS: list[list[Any]] = [
    ["7767517\n2 2\nInput data 0 1 data\nKW k 1 1 data out 0=16 1=1\n", [["raw", 16]]],
    ["7767517\n5 5\nInput data 0 1 data\nKW k 1 1 data a 0=16 1=0\nBias b 1 1 a bb 0=1\n"
     "MemoryData md 0 1 m 0=16\nBinaryOp add 2 1 bb m out 0=0\n", [["tag", 16], ["raw", 1], ["raw", 16]]],
    ["7767517\n3 3\nInput data 0 1 data\nInnerProduct ip 1 1 data a 0=8 1=1 2=128\nKW k 1 1 a out 0=8 1=0\n",
     [["tag", 128], ["raw", 8], ["tag", 8]]],
    # ncnn's layers alone: nothing a Python layer kept can expire and fail the extract first.
    ["7767517\n4 4\nInput data 0 1 data\nBias b 1 1 data bb 0=1\nMemoryData md 0 1 m 0=16\n"
     "BinaryOp add 2 1 bb m out 0=0\n", [["raw", 1], ["raw", 16]]],
]
# The buffers "wip" steps load from (the runner's wip_buffer): bytes, a read-only memoryview
# slice of bytes at a 4-byte aligned offset (accepted in place); a bytearray, a memoryview of
# one, a writable Mat, a Mat over bytes, a view of one, an unaligned slice (ValueError); a
# path, a DataReader (TypeError).
# "r2" steps (issue 21's round two): standalone forwards of every layer type with random blob
# counts, shapes, element sizes and packings; ModelBin mat arrays of every element kind;
# close() from inside a Python reader's read(); memoryviews of every kind of buffer given to
# load_model(copy=False); pixel helpers and drawing asked for more than any heap has.
R2_LAYER_TYPES = 110
R2_VALUES = [-233, -234, -1, 0, 0, 1, 1, 2, 3, 4, 8]
R2_SHAPES = [[4], [8], [3, 2], [4, 4], [2, 2, 3], [5, 3, 2], [2, 2, 2, 2], [1]]
R2_MBA = ["f32", "f32", "i8", "f16", "pack4", "short", "long", "none"]
R2_CLOSES = ["mb_in_read", "dr_in_read", "mb_in_layer_load"]
R2_VIEWS = ["own", "border", "mid", "bytes", "bytes_slice"]
R2_HUGE = ["font", "resize", "resize_roi", "to_pixels"]
# "r3" steps (issue 31's round three), drawn from a random stream of their own and appended, so
# the sequences above stay as they were: padding of every sign and mode on the layers that pad
# (explicit pads, SAME -233/-234, Pooling's pad_mode 0-3, a Padding layer's own, front/behind),
# on inputs of odd sides; camera frames (RGB565 both byte orders, YUYV, NV12, NV21) into Mats and
# back, with odd sides, strides short, exact and long, buffers short, exact and long.
R3_PAD_LAYERS = ["Pooling", "Convolution", "ConvolutionDepthWise", "Padding"]
R3_PADS = [-234, -233, -60, -3, -2, -1, 0, 0, 1, 2, 3, 40]
R3_CAMERA = ["PIXEL_RGB565", "PIXEL_RGB565_BE", "PIXEL_YUYV", "PIXEL_NV12", "PIXEL_NV21"]
R3_TARGETS = ["", "PIXEL_RGB", "PIXEL_BGR", "PIXEL_GRAY", "PIXEL_RGBA", "PIXEL_BGRA"]
R3_CAMERA_OPS = ["from_pixels", "from_pixels_resize", "to_pixels"]
WIP_ACCEPTED = ["bytes", "mv"]
WIP_REFUSED = ["bytearray", "mvba", "matrw", "mat", "matv", "mvu", "str", "dr"]

# DataReaders written in Python ("prd" steps, the runner's do_prd): readers over a WIP_NETS
# kind's param text, its binary param, its weights, or params and weights as one stream.
# The binary params come from the texts: ncnn's layer type indices (layer_type_enum.h), KW
# as custom type CUSTOM_BIT | 0, every param an int.
PRD_TYPE_INDEX = {"Input": 16, "Bias": 3, "InnerProduct": 15, "MemoryData": 19, "BinaryOp": 40, "KW": 256}
PRD_STREAMS = ["text", "bin", "weights", "weights", "weights", "text+w", "bin+w"]
# What a load through each stream is (then, for the combined ones, the weights' load).
PRD_METHODS = {"text": ["load_param"], "bin": ["load_param_bin"], "weights": ["load_model", "modelbin"],
               "text+w": ["load_param"], "bin+w": ["load_param_bin"]}
# What a reader does at a given read() call (the runner's prd_act).
PRD_EVENTS = [["raise", "own"], ["raise", "own"], ["raise", "os"], ["junk", "none"], ["junk", "int"],
              ["junk", "float"], ["junk", "tuple"], ["junk", "list"], ["junk", "long"], ["junk", "longmv"],
              ["closeself", None], ["closeself!", None], ["closeother", "r1"], ["closeother", "r0"],
              ["plainother", "n1"], ["plainsame", None], ["viaself", "text"], ["viaself", "bin"],
              ["viaother", "r1"], ["gc", None], ["dropself", None], ["keep", None]]


def binary_param(text: str) -> tuple[bytes, int]:
    """A param text as ncnn's binary param, and the index of its blob "out"."""
    lines = text.strip().splitlines()
    count, nblobs = map(int, lines[1].split())
    blobs: dict[str, int] = {}
    out = struct.pack("<iii", 7767517, count, nblobs)
    for line in lines[2:]:
        f = line.split()
        nb, nt = int(f[2]), int(f[3])
        bottoms, tops = f[4:4 + nb], f[4 + nb:4 + nb + nt]
        for t in tops:
            blobs.setdefault(t, len(blobs))
        out += struct.pack("<iii", PRD_TYPE_INDEX[f[0]], nb, nt)
        out += struct.pack(f"<{nb + nt}i", *[blobs[b] for b in bottoms + tops])
        for kv in f[4 + nb + nt:]:
            k, v = kv.split("=")
            out += struct.pack("<ii", int(k), int(v))
        out += struct.pack("<i", -233)
    return out, blobs["out"]


PRD_BIN = [[b.hex(), o] for b, o in (binary_param(t) for t, _ in WIP_NETS)]


def choose_int(rng: random.Random) -> int:
    return rng.choice(SMALL_INTS) if rng.random() < 0.85 else rng.choice(ODD_INTS)


def any_value(rng: random.Random, depth: int = 0) -> Spec:
    """A value of any kind: what a wrong-type argument gets."""
    r = rng.random()
    if r < 0.2:
        return choose_int(rng)
    if r < 0.3:
        return {"t": "float", "v": rng.choice(FLOATS)}
    if r < 0.4:
        return rng.choice(["data", "", "x" * 300, "ReLU"])
    if r < 0.5:
        return None
    if r < 0.6:
        return rng.choice([True, False])
    if r < 0.7:
        return buffer(rng)
    if r < 0.8 and depth < 2:
        return [any_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {"t": "obj", "c": rng.choice(["Mat", "Net", "Option", "Allocator", "DataReader", "ParamDict", "ModelBin",
                                          "Layer", "Extractor"]), "k": rng.randrange(8)}


def buffer(rng: random.Random, sizes: list[int] | None = None) -> Spec:
    n = rng.choice(sizes or [0, 1, 3, 4, 16, 64, 96])
    data = bytes(rng.randrange(256) for _ in range(min(n, 64))) * (n // 64 + 1)
    kind = rng.choice(["bytes", "bytearray", "memoryview", "rmemoryview"])
    return {"t": "bytes", "v": data[:n].hex(), "kind": kind, "off": rng.choice([0, 0, 4, 1]) if kind == "rmemoryview" else 0}


def derivations(rng: random.Random) -> list[list[str]]:
    """Which Mats a "derive" action makes from each lent Mat, and with which Option."""
    return [[h, rng.choice(["lent", "fresh"])] for h in rng.sample(DERIVATIONS, rng.randint(3, len(DERIVATIONS)))]


def layer_spec(rng: random.Random, lid: int, derive: bool = False) -> dict[str, Any]:
    """How one custom layer class behaves (see the runner's layer_class); derive: its forward
    methods make Mats from what they are lent and keep them."""
    fwi = rng.random() < 0.4
    spec: dict[str, Any] = {
        "id": lid, "obo": rng.random() < 0.7, "inpl": fwi and rng.random() < 0.8 or rng.random() < 0.03,
        "fwd": rng.choice([3, 3, 4, 4, 0]) if not fwi or rng.random() < 0.5 else 0, "fwi": fwi,
        "init": rng.choices(["ok", "raise", "skip"], weights=[0.94, 0.03, 0.03])[0],
        "flags": {f: rng.random() < 0.5 for f in rng.sample(FLAGS, rng.randint(0, 2))},
        "weights": rng.choice([0] * 8 + [4, 64]),
    }
    for m in ("load_param", "load_model", "create_pipeline", "destroy_pipeline"):
        spec["def_" + m] = rng.random() < 0.9
    if derive:
        spec["init"] = "ok"
    for key in ("lp", "lm", "cp", "dp", "f", "fi"):
        if derive and key in ("f", "fi"):
            spec[key] = ["derive", 1, derivations(rng)]
            continue
        if rng.random() < 0.7:
            continue
        what = rng.choice(["raise", "ret", "keep", "gc", "usekept", "write", "reenter", "lent", "empty", "count",
                           "notmat", "derive"])
        extra: Any = None
        if what == "derive":
            extra = derivations(rng)
        elif what == "raise":
            extra = rng.choice(["ValueError", "MemoryError", "KeyboardInterrupt", "SystemExit", "RuntimeError"])
        elif what == "ret":
            extra = rng.choice([1, -1, 0, None, "x", True, {"t": "float", "v": "2.5"}, {"t": "obj", "c": "Mat", "k": 0}])
        elif what == "reenter":
            extra = reentry(rng)
        spec[key] = [what, rng.choice([1, 1, 2, 3]), extra]
    return spec


def reentry(rng: random.Random) -> list[Any]:
    """A call made from inside a custom layer's method, while ncnn is running the net."""
    k = rng.randrange(4)
    return rng.choice([
        ["call", "Net", k, "clear", [], {}],
        ["call", "Net", k, "close", [], {}],
        ["call", "Net", k, "load_param", [{"t": "text", "k": rng.randrange(len(TEXTS))}], {}],
        ["call", "Net", k, "load_model", [{"t": "dr"}], {}],
        ["call", "Net", k, "load_model", [buffer(rng, [16, 256])], {"copy": False}],
        ["call", "Net", k, "create_extractor", [], {}],
        ["call", "Extractor", k, "extract", [rng.choice(BLOBS)], {}],
        ["call", "Extractor", k, "input", ["data", {"t": "obj", "c": "Mat", "k": k}], {}],
        ["call", "Extractor", k, "close", [], {}],
        ["call", "Mat", k, "fill", [{"t": "float", "v": "1.0"}], {}],
        ["drop", "Net", k],
        ["gc"],
    ])


def hook_spec(rng: random.Random) -> Spec:
    """Extractor.extract's hook: what it does at its n-th call (the api_runner's hook()): nothing,
    raise, call back into ncnn_mp (reentry: close or clear what runs, extract again, collect), keep
    its arguments, or take the wrong arguments; sometimes no hook, or something not callable."""
    what = rng.choices(["ok", "raise", "reenter", "keep", "arity", "none", "notcallable"],
                       weights=[0.2, 0.25, 0.3, 0.1, 0.05, 0.05, 0.05])[0]
    extra: Any = None
    if what == "raise":
        extra = rng.choice(["ValueError", "MemoryError", "KeyboardInterrupt", "SystemExit", "RuntimeError"])
    elif what == "reenter":
        extra = reentry(rng)
    return {"t": "hook", "what": what, "at": rng.choice([1, 1, 2, 3, 5]), "extra": extra}


def creator_spec(rng: random.Random, lid: int) -> Spec:
    kind = rng.choices(["class", "new", "same", "none", "builtin", "raise", "notcallable"],
                       weights=[0.6, 0.2, 0.05, 0.04, 0.04, 0.04, 0.03])[0]
    return {"t": "creator", "kind": kind, "b": layer_spec(rng, lid)}


class Generator:
    """Arguments from annotations, steered by parameter names."""

    def __init__(self, stub: Stub, rng: random.Random) -> None:
        self.stub, self.rng = stub, rng
        self.lids = 0
        self.made: set[str] = set()  # classes the sequence has made an instance of
        self.sweep: int | None = None  # the next random step calls member number sweep (then random ones)

    def new_lid(self) -> int:
        self.lids += 1
        return self.lids

    def hinted(self, cls: str, method: str, p: Param) -> tuple[bool, Spec]:
        rng, name = self.rng, p.name
        if name in ("w", "h", "d", "c", "target_w", "target_h", "roiw", "roih"):
            return True, rng.choice([0, 1, 2, 3, 4, 5, 8, 16, 32]) if rng.random() < 0.9 else rng.choice(ODD_INTS + [-1])
        if name in ("x", "y", "roix", "roiy", "rx", "ry", "rw", "rh", "cx", "cy", "x0", "y0", "x1", "y1", "radius",
                    "thickness", "top", "bottom", "left", "right", "front", "behind", "stride", "fontpixelsize",
                    "channels"):
            return True, rng.choice([-1, 0, 1, 2, 3, 4, 8]) if rng.random() < 0.9 else rng.choice(ODD_INTS)
        if name == "elemsize":
            return True, rng.choice([0, 1, 2, 4, 4, 4, 8, 3, -1])
        if name == "elempack":
            return True, rng.choice([0, 1, 1, 4, 8, 3, -1])
        if name in ("type", "typeindex") and cls == "Net":
            return True, rng.choice(CUSTOM + ["ReLU", "Softmax", "", 256, 257, 26, -1])
        if name == "creator":
            return True, creator_spec(rng, self.new_lid())
        if name == "hook":
            return True, hook_spec(rng)
        if name == "type" and cls == "Layer":
            return True, rng.choice(LAYER_TYPES + [None, 3])
        if name == "type" and method.startswith(("from_pixels", "to_pixels")):
            return True, {"t": "const", "c": "Mat", "n": rng.choice(PIXELS)} if rng.random() < 0.9 else choose_int(rng)
        if name == "type" and "border" in method:
            return True, {"t": "const", "c": "Mat", "n": rng.choice(BORDERS)} if rng.random() < 0.9 else choose_int(rng)
        if name == "blob":
            return True, rng.choice(BLOBS)
        if name == "id":
            return True, rng.choice([0, 1, 2, 3, 7, 31, 32, -1, -23300])
        if name in ("src", "text") and "model" not in method:
            return True, {"t": "text", "k": rng.randrange(len(TEXTS)), "str": name == "text" and rng.random() < 0.5}
        if name in ("src", "data") and "model" in method:
            return True, rng.choice([{"t": "dr"}, buffer(rng, [0, 4, 16, 256, 1024])])
        if name == "pixels":
            return True, buffer(rng, [0, 1, 12, 48, 64, 192, 256, 768, 1024])
        if name == "text" and cls == "Mat":
            return True, rng.choice(["ncnn", "", "x" * 100, "\u00e4"])
        if name == "from_stdio":
            return True, rng.choice(["api_runner.py", "/nonexistent", {"t": "obj", "c": "Mat", "k": 0}])
        return False, None

    def value(self, node: ast.expr | None, cls: str) -> Spec:
        """A value of the annotated type (a union: one of its members)."""
        rng = self.rng
        if node is None:
            return any_value(rng)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self.value(rng.choice([node.left, node.right]), cls)
        if isinstance(node, ast.Constant):
            return None if node.value is None else node.value
        if isinstance(node, ast.Subscript):
            base = ast.unparse(node.value)
            if base in ("Sequence", "list"):
                return [self.value(node.slice, cls) for _ in range(rng.randint(0, 4))]
            if base == "tuple":
                elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                return {"t": "tuple", "v": [self.value(e, cls) for e in elts]}
            if base == "Callable":
                return creator_spec(rng, self.new_lid())
            return any_value(rng)
        name = ast.unparse(node)
        if name == "int":
            return choose_int(rng)
        if name == "float":
            return {"t": "float", "v": rng.choice(FLOATS)} if rng.random() < 0.3 else rng.choice([0.0, 0.5, 1.0, -3.0, 255.0])
        if name == "bool":
            return rng.random() < 0.5
        if name == "str":
            return rng.choice(["data", "out", "ReLU", "", "x" * 300])
        if name == "Buffer":
            return buffer(rng)
        if name == "Self":
            return {"t": "obj", "c": cls, "k": rng.randrange(8)}
        if name in self.stub.classes:
            if rng.random() < 0.08:  # something a custom layer kept from a call it was lent it for
                return {"t": "kept", "k": rng.randrange(8)}
            return {"t": "obj", "c": name, "k": rng.randrange(8)}
        if name == "object":
            return None
        return any_value(rng)

    def arguments(self, cls: str, method: str, params: list[Param]) -> tuple[list[Spec], dict[str, Spec]]:
        rng = self.rng
        args: list[Spec] = []
        kw: dict[str, Spec] = {}
        skipping = False
        for p in params:
            steered, v = self.hinted(cls, method, p)
            if not steered:
                v = self.value(p.ann, cls)
            if rng.random() < 0.06:  # the wrong type on purpose
                v = any_value(rng)
            if p.kind == "var":
                for _ in range(rng.choice([0, 0, 1, 2, 3, 4])):
                    args.append(choose_int(rng) if rng.random() < 0.7 else self.value(p.ann, cls))
            elif p.kind == "kw":
                if not p.optional or rng.random() < 0.5:
                    kw[p.name] = v
            elif p.optional and (skipping or rng.random() < 0.4):
                skipping = True  # leave this one and the rest of the optional positionals out
            else:
                args.append(v)
        if rng.random() < 0.03:
            args.append(any_value(rng))  # one too many
        if rng.random() < 0.02:
            kw["bogus"] = 1
        return args, kw

    def random_step(self) -> list[Any]:
        """One call of anything in the stub."""
        rng, stub = self.rng, self.stub
        if rng.random() < 0.08:
            name = rng.choice(sorted(stub.functions))
            a, kw = self.arguments("", name, rng.choice(stub.functions[name].overloads))
            return ["fn", name, a, kw]
        # Half the time every class equally likely, half the time every member of every
        # class (Mat, with most members, gets more steps): both reach all in a few hundred
        # sequences, and each sequence's first such step is member number sid of them all,
        # so a budget of more sequences than members calls every one, whatever the stub adds.
        if self.sweep is not None:
            pairs = [(c, n) for c in sorted(stub.classes) for n in sorted(stub.classes[c])]
            cls, name = pairs[self.sweep % len(pairs)]
            if cls in self.made or "__init__" not in stub.classes[cls]:
                self.sweep = None  # (else this step makes one, and the next calls the member)
        elif rng.random() < 0.5:
            cls = rng.choice(sorted(stub.classes))
            name = rng.choice(sorted(stub.classes[cls]))
        else:
            cls, name = rng.choice([(c, n) for c in sorted(stub.classes) for n in sorted(stub.classes[c])])
        members = stub.classes[cls]
        m = members[name]
        k = rng.randrange(8)
        first = cls not in self.made and "__init__" in members  # make one before using one
        self.made.add(cls)
        if first or m.kind == "init" or (rng.random() < 0.15 and "__init__" in members):
            a, kw = self.arguments(cls, "__init__", rng.choice(members["__init__"].overloads))
            return ["new", cls, a, kw]
        if m.kind == "property":
            return ["get", cls, k, m.name]
        if rng.random() < 0.03:  # call the method on something a custom layer kept
            return ["keptcall", k, m.name]
        if m.kind == "attr":
            if rng.random() < 0.5 or m.name.isupper() or m.name.startswith(("PIXEL_", "BORDER_")):
                return ["get", cls, k, m.name]
            v = self.value(m.ann, cls) if rng.random() < 0.9 else any_value(rng)
            if m.name == "num_threads" and rng.random() < 0.8:
                v = rng.choice([1, 1, 2])  # more would only be slow
            return ["set", cls, k, m.name, v]
        params = rng.choice(m.overloads)
        if m.name == "__getitem__":
            return ["item", k, self.value(params[0].ann, cls)]
        if m.name == "__setitem__":
            return ["item", k, self.value(params[0].ann, cls), self.value(params[1].ann, cls)]
        if m.name == "__len__":
            return ["len", k]
        if m.name == "__buffer__":
            return ["view", k, rng.randrange(64), rng.random() < 0.5]
        a, kw = self.arguments(cls, m.name, params)
        if m.kind == "static":
            return ["static", cls, m.name, a, kw]
        return ["call", cls, k, m.name, a, kw]

    def scenario(self, derive: bool = False) -> list[list[Any]]:
        """A net with misbehaving custom layers, loaded and run (the path most calls into ncnn take).
        derive: its layers keep Mats made from what ncnn lends them, which are then used after
        the extract, after clear(), close() and a collection ("derived" steps)."""
        rng = self.rng
        steps: list[list[Any]] = [["new", "Net", [], {}]]
        self.made.update({"Net", "Mat", "Extractor"})
        if rng.random() < 0.3:
            steps.append(["set", "Net", -1, rng.choice(["opt", "option"]), {"t": "obj", "c": "Option", "k": 0}])
        for t in (CUSTOM if derive else rng.sample(CUSTOM, rng.randint(1, 4))):
            creator = (creator_spec(rng, self.new_lid()) if not derive else
                       {"t": "creator", "kind": rng.choice(["class", "new"]), "b": layer_spec(rng, self.new_lid(), True)})
            steps.append(["call", "Net", -1, "register_custom_layer", [t, creator], {}])
        text = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 9] if derive else range(len(TEXTS)))
        steps.append(["call", "Net", -1, rng.choice(["load_param", "load_param", "load_param_mem"]),
                      [{"t": "text", "k": text}], {}])
        weights = {"t": "dr"} if rng.random() < 0.6 else buffer(rng, [0, 16, 256, 1024])
        # From a buffer, now and then in place: the layers' ModelBin then hands out Mats over it.
        in_place = {"copy": False} if weights["t"] == "bytes" and rng.random() < 0.5 else {}
        steps.append(["call", "Net", -1, "load_model", [weights], in_place])
        steps.append(["new", "Mat", rng.choice([[4, 2, 1], [8], [4, 2], [2, 2, 2, 2], [0]]), {}])
        steps.append(["call", "Mat", -1, "fill", [{"t": "float", "v": rng.choice(["0.5", "-1.0"])}], {}])
        runs = rng.randint(1, 3)
        for _ in range(runs):
            steps.append(["call", "Net", -1, "create_extractor", [], {}])
            steps.append(["call", "Extractor", -1, "input", [rng.choice(["data", "data", 0, "a"]),
                                                              {"t": "obj", "c": "Mat", "k": -1}], {}])
            for _ in range(rng.randint(1, 2)):
                hooked = {"hook": hook_spec(rng)} if rng.random() < 0.3 else {}  # (between its layers)
                steps.append(["call", "Extractor", -1, "extract", [rng.choice(["out", "out", "a", "b", 1, "data"])], hooked])
                if derive:
                    steps.append(["derived"])
            if rng.random() < 0.5:
                steps.append(["call", "Extractor", -1, "close", [], {}])
        if derive:
            ends: list[list[Any]] = [["call", "Net", -1, "clear", [], {}], ["call", "Net", -1, "close", [], {}],
                                     ["gc"], ["drop", "Net", -1]]
            for end in rng.sample(ends, rng.randint(1, 4)):
                steps += [end, ["derived"]]
            return steps
        if rng.random() < 0.3:
            steps.append(["call", "Net", -1, "clear", [], {}])
        if rng.random() < 0.2:
            steps.append(["drop", "Net", -1])
        return steps

    def allocators(self) -> list[list[Any]]:
        """Standalone layers and Mat helpers given an Option whose blob (and workspace)
        allocator is an Allocator; then the Option, the Allocator, the input and the layer
        dropped or closed in a random order, with the results checked in between ("al" steps)."""
        rng = self.rng
        steps: list[list[Any]] = [["al", "alloc", "a", rng.random() < 0.3], ["al", "opt", "o"], ["al", "set", "o", "blob", "a"]]
        if rng.random() < 0.4:
            steps.append(["al", "alloc", "b", rng.random() < 0.3])
        if rng.random() < 0.7:
            steps.append(["al", "set", "o", "workspace", rng.choice(["a", "b"])])
        shape = rng.choice(AL_SHAPES)
        steps.append(["al", "x", "x", shape, rng.randrange(11)])
        results = []
        for j in range(rng.randint(1, 3)):
            r = f"r{j}"
            if rng.random() < 0.2:  # through a Net whose option holds the Allocator
                if not any(st[1] == "net" for st in steps):
                    steps.append(["al", "net", "n", rng.choice(["a", "b"])])
                steps.append(["al", "extract", r, "n", "x", rng.choice(["o", None])])
            else:
                steps.append(["al", "make", r, rng.choice(AL_KINDS), "x", "o", rng.choice(["a", "b"])])
            results.append(r)
        ends: list[list[Any]] = [["al", "set", "o", "blob", None], ["al", "set", "o", "workspace", None], ["al", "close", "a"],
                ["al", "close", "b"], ["al", "del", "o"], ["al", "del", "a"], ["al", "del", "b"], ["al", "del", "x"],
                ["gc"], ["gc"], ["al", "close", "n"], ["al", "del", "n"]]
        ends += [["al", "del", "L" + r] for r in results] + [["al", "close", "E" + r] for r in results]
        ends += [["al", "del", "E" + r] for r in results]
        ends += [["al", "del", r] for r in results if rng.random() < 0.3]
        rng.shuffle(ends)
        for end in ends:
            steps.append(end)
            if rng.random() < 0.4:
                steps.append(["al", "check", rng.choice(results)])
        steps += [["gc"]] + [["al", "check", r] for r in results]
        return steps

    def weights_in_place(self) -> list[list[Any]]:
        """A net of a WIP_NETS kind loaded from buffers of every kind, in place or copied, then
        the buffer dropped and the heap collected and reused, the net cleared, given its param
        again or closed, in between extracts, weights_info() and uses of the Mats its Python
        layer kept ("wip" steps; the runner judges each). Now and then a Mat the net points
        into is given new storage, or the net is loaded from a Mat ncnn lends a Python layer."""
        rng = self.rng
        kind = rng.randrange(len(WIP_NETS))
        checks: list[list[Any]] = [["wip", "info", "n"], ["wip", "run", "n"], ["wip", "kept"]]
        steps: list[list[Any]] = [["wip", "net", "n", kind]]
        for _ in range(rng.randint(1, 3)):
            buf = rng.choice(WIP_ACCEPTED * 3 + WIP_REFUSED)
            of = kind if rng.random() < 0.9 else rng.randrange(len(WIP_NETS))  # another kind's weights, now and then
            cut = 0 if rng.random() < 0.8 else rng.choice([1, 4, 8, 40, 10000])  # bytes short of the end
            steps.append(["wip", "buf", "b", of, rng.randrange(1000), buf, cut, rng.choice([0, 0, 0, 4, 7, 64]),
                          [rng.choice(["fp32", "fp32", "fp16"]) for _ in range(2)]])
            steps.append(["wip", "load", "n", "b", buf != "str" and rng.random() < 0.2])
            if buf.startswith("mat") and rng.random() < 0.5:  # the Mat the net may point into gets new storage
                steps.append(["wip", "matop", "b", rng.choice(["create", "create", "fill", "release"])])
            if rng.random() < 0.7:  # only the net holds the buffer now
                steps += [["wip", "drop", "b"], ["wip", "churn"]]
            steps += rng.sample(checks, len(checks))
            if rng.random() < 0.3:
                steps.append(rng.choice([["wip", "clear", "n"], ["wip", "param", "n"], ["gc"]]))
                steps += rng.sample(checks, rng.randint(1, 3))
        for end in rng.sample([["wip", "clear", "n"], ["wip", "close", "n"], ["wip", "drop", "n"], ["wip", "drop", "b"]],
                              rng.randint(1, 3)):
            steps += [end, ["wip", "churn"]] + rng.sample(checks, rng.randint(1, 3))
        if rng.random() < 0.3:  # in place from a Mat ncnn lends a Python layer, or a memoryview of it
            steps += [["wip", "net", "v", rng.randrange(len(WIP_NETS))],
                      ["wip", "attack", "v", rng.choice(["mat", "mv"]), rng.random() < 0.5],
                      ["wip", "churn"], ["wip", "run", "v"], ["wip", "info", "v"], ["wip", "kept"]]
        return steps

    def python_readers(self) -> list[list[Any]]:
        """DataReader subclasses written in Python over a WIP_NETS kind's streams, misbehaving at
        random read() calls (PRD_EVENTS), loaded through by two nets, reused, rewound, closed,
        dropped and collected in between ("prd" steps; the runner judges each load and then
        loads the net from plain bytes)."""
        rng = self.rng
        kind = rng.randrange(len(WIP_NETS))
        steps: list[list[Any]] = [["prd", "net", "n0", kind], ["prd", "net", "n1", kind]]

        def reader(slot: str) -> tuple[list[Any], str]:
            what = rng.choice(PRD_STREAMS)
            chunks = [rng.choice([0, 0, 1, 2, 3, 4, 7, 13, 64, 255, 256, 1000]) for _ in range(rng.randint(1, 3))]
            spec: dict[str, Any] = {"chunks": chunks, "ev": {},
                                    "as": [rng.choice(["bytes", "bytes", "mv", "ba", "str"]) for _ in range(rng.randint(1, 3))]}
            for _ in range(rng.choice([0, 1, 1, 1, 2])):  # at a call the loads reach, mostly
                call = rng.choice([1, 2, 3, 5, 8, 20, 60]) if rng.random() < 0.8 else rng.randint(1, 400)
                spec["ev"][str(call)] = rng.choice(PRD_EVENTS)
            cut = 0 if rng.random() < 0.85 else rng.choice([1, 3, 4, 17, 60])
            return ["prd", "reader", slot, kind, what, rng.randrange(100), cut, spec], what

        made: dict[str, str] = {}
        for _ in range(rng.randint(1, 4)):
            r = rng.choice(["r0", "r0", "r1"])
            if r not in made or rng.random() < 0.4:
                step, made[r] = reader(r)
                steps.append(step)
            what = made[r]
            net = rng.choice(["n0", "n0", "n1"])
            methods = PRD_METHODS[what] if rng.random() < 0.93 else ["load_param", "load_param_bin", "load_model", "nocopy"]
            steps.append(["prd", "load", net, r, rng.choice(methods)])
            if what.endswith("+w") and rng.random() < 0.8:  # the weights from the same stream
                steps.append(["prd", "load", net, r, rng.choice(["load_model", "load_model", "modelbin"])])
            for _ in range(rng.randint(0, 2)):
                steps.append(rng.choice([["prd", "load", net, r, rng.choice(PRD_METHODS[what])],  # reused
                                         ["prd", "rewind", r], ["prd", "close", r], ["prd", "drop", r], ["gc"],
                                         ["prd", "mbmore"], ["prd", "run", rng.choice(["n0", "n1"])], ["prd", "unkeep"],
                                         ["prd", "drop", "mb"]]))
        steps += [["gc"], ["prd", "run", "n0"], ["prd", "mbmore"]]
        return steps

    def round_two(self) -> list[list[Any]]:
        """Issue 21's attacks, a few at a time ("r2" steps; the runner judges each)."""
        rng = self.rng
        steps: list[list[Any]] = []
        for _ in range(rng.randint(1, 4)):
            kind = rng.choice(["zoo", "zoo", "zoo", "mba", "close", "view", "huge"])
            if kind == "zoo":
                params = [[rng.randint(0, 24), rng.choice(R2_VALUES)] for _ in range(rng.randint(0, 5))]
                bottoms = [[rng.choice(R2_SHAPES), rng.choice([4, 4, 4, 1, 2]), rng.choice([1, 1, 1, 4])]
                           for _ in range(rng.randint(0, 3))]
                steps.append(["r2", "zoo", rng.randrange(R2_LAYER_TYPES), params, bottoms, rng.randint(1, 3),
                              rng.random() < 0.2])
            elif kind == "mba":
                steps.append(["r2", "mba", [rng.choice(R2_MBA) for _ in range(rng.randint(0, 3))]])
            elif kind == "close":
                steps.append(["r2", "close", rng.choice(R2_CLOSES)])
            elif kind == "view":
                steps.append(["r2", "view", rng.choice(R2_VIEWS)])
            else:
                steps.append(["r2", "huge", rng.choice(R2_HUGE), rng.choice([4096, 16384, 32768])])
            if rng.random() < 0.3:
                steps.append(["gc"])
        return steps

    def buffers(self) -> list[list[Any]]:
        """Mat(data=bytearray or array) whose buffer then grows (moving or not), used every way
        after; with an Extractor given it before, and views made from it before ("buf" steps)."""
        rng = self.rng
        shape = rng.choice(AL_SHAPES)
        steps: list[list[Any]] = [["buf", "new", "b", shape, rng.randrange(9), rng.choice([0, 0, 4, 64]),
                                   rng.choice(["bytearray", "bytearray", "array"])]]
        if rng.random() < 0.5:
            steps.append(["buf", "input", "b"])
        # (No Mat over a memoryview of it: a memoryview keeps only the address, so a Mat
        # over one cannot tell that the buffer moved; docs/limits.md.)
        for _ in range(rng.randint(0, 3)):
            steps.append(["buf", "view", "b", rng.choice(["reshape", "batch", "data", "clone", "flatten",
                                                          "border0", "extract"])])
        for _ in range(rng.randint(1, 2)):
            steps.append(["buf", "grow", "b", rng.choice(["extend", "slice", "iadd"]),
                          rng.choice([1, 4, 16, 256, 4096, 65536])])
            if rng.random() < 0.3:
                steps.append(["gc"])
            steps += [["buf", "use", "b"], ["derived"]]
        return steps


def round_three(rng: random.Random) -> list[list[Any]]:
    """Issue 31's attacks, a few at a time ("r3" steps; the runner judges each)."""
    steps: list[list[Any]] = []
    odd = [1, 2, 3, 4, 5, 6, 7, 12, 13]
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.5:
            kind = rng.choice(R3_PAD_LAYERS)
            if kind == "Padding":
                keys = [0, 1, 2, 3, 7, 8]
                params = [[k, rng.choice(R3_PADS)] for k in keys if rng.random() < 0.6] + [[4, rng.choice([0, 1, 2])]]
            elif kind == "Pooling":
                params = [[0, rng.choice([0, 1])], [1, rng.randint(1, 4)], [11, rng.randint(1, 4)], [2, rng.randint(1, 6)],
                          [5, rng.randint(0, 3)]] + [[k, rng.choice(R3_PADS)] for k in (3, 13, 14, 15) if rng.random() < 0.5]
            else:
                k = rng.randint(1, 3)
                pad = rng.choice(R3_PADS)
                params = [[0, 2], [1, k], [3, rng.randint(1, 5)], [4, pad]] + \
                         [[key, rng.choice([pad, *R3_PADS])] for key in (14, 15, 16) if rng.random() < 0.4]
                params.append([6, 2 * k * k * (1 if kind == "Convolution" else 1)])
                if kind == "ConvolutionDepthWise":
                    params.append([7, 1])
            shape = [rng.choice(odd), rng.choice(odd)] + ([1] if rng.random() < 0.7 else [])
            steps.append(["r3", "pad", kind, params, shape])
        else:
            w, h = rng.choice([1, 2, 3, 5, 6, 7, 9]), rng.choice([1, 2, 3, 4, 5, 7])
            steps.append(["r3", "camera", rng.choice(R3_CAMERA), rng.choice(R3_TARGETS), w, h,
                          rng.choice(["exact", "short", "long", "zero"]), rng.choice(["exact", "short", "long"]),
                          rng.choice(R3_CAMERA_OPS), rng.choice([1, 3, 8])])
        if rng.random() < 0.3:
            steps.append(["gc"])
    return steps


def make_sequence(stub: Stub, seed: int, sid: int) -> list[list[Any]]:
    rng = random.Random(f"api-{seed}-{sid}")
    gen = Generator(stub, rng)
    gen.sweep = sid
    steps: list[list[Any]] = []
    length = rng.randint(10, 60)
    while len(steps) < length:
        r = rng.random()
        if r < 0.12:
            steps += gen.scenario()
        elif r < 0.16:
            steps += gen.scenario(derive=True)
        elif r < 0.19:
            steps += gen.allocators()
        elif r < 0.22:
            steps += gen.buffers()
        elif r < 0.255:
            steps += gen.weights_in_place()
        elif r < 0.28:
            steps += gen.python_readers()
        elif r < 0.30:
            steps += gen.round_two()
        elif r < 0.34:
            steps.append(["gc"])
        elif r < 0.37:
            steps.append(["drop", rng.choice(["Mat", "Net", "Extractor", "Option", "Layer"]), rng.randrange(8)])
        elif r < 0.39:
            steps.append(["unkeep"])
        elif r < 0.42:
            cls = rng.choice(["Net", "Extractor", "Allocator", "DataReader"])
            steps.append(["with", cls, rng.randrange(8), gen.random_step()])
        else:
            steps.append(gen.random_step())
    while gen.sweep is not None:  # (every member is reached whatever the chunks above draw)
        steps.append(gen.random_step())
    r3 = random.Random(f"api-r3-{seed}-{sid}")  # (a stream of its own: the steps above stay as they were)
    if r3.random() < 0.3:
        steps += round_three(r3)
    return steps


# ---------------------------------------------------------------------------
# Running sequences.

@dataclass
class Sequence:
    id: int
    steps: list[list[Any]]

    def encode(self) -> bytes:
        return json.dumps({"id": self.id, "steps": self.steps}).encode() + b"\n"


def payload(seqs: list[Sequence], verbose: bool = False, passes: int = PASSES) -> bytes:
    head = {"texts": TEXTS, "wip": WIP_NETS, "prdbin": PRD_BIN, "passes": passes, "verbose": verbose}
    return json.dumps(head).encode() + b"\n" + b"".join(s.encode() for s in seqs)


def run_seqs(mp: MicroPython, seqs: list[Sequence], verbose: bool = False, timeout: float | None = None,
             passes: int = PASSES) -> Run:
    slow = 40 if mp.valgrind else 1
    return run_batch(mp, RUNNER, payload(seqs, verbose, passes), timeout or slow * passes * (30 + 0.3 * len(seqs)))


def heap_growth(run: Run) -> int | None:
    """Bytes the heap grew by from the end of the second pass to the lowest end of a later one."""
    heap = [int(ln.split()[2]) for ln in run.extra if ln.startswith("P ")]
    return min(heap[2:]) - heap[1] if len(heap) >= 3 and min(heap) >= 0 else None


def problems(run: Run, slack: int) -> list[str]:
    """What went wrong in a run: death, a FAIL line, or a heap that grew."""
    out = []
    if run.died:
        out.append(run.how())
    fails: dict[str, list[str]] = {}  # sequence -> its FAIL lines (each pass repeats them)
    for ln in run.extra:
        if ln.startswith("FAIL"):
            lines = fails.setdefault(ln.split()[1], [])
            if ln not in lines:
                lines.append(ln)
    out += [lines[0] + (f" (and {len(lines) - 1} more)" if len(lines) > 1 else "") for lines in fails.values()]
    if "destroyed too early" in run.stderr:  # ncnn: a Mat outlived the pool allocator it came from
        out.append("ncnn: " + next(ln for ln in run.stderr.splitlines() if "destroyed too early" in ln).strip())
    grown = heap_growth(run)
    if not run.died and grown is not None and grown > slack:
        out.append(f"heap grew by {grown} bytes after the second pass over the batch")
    return out


@dataclass
class Finding:
    how: str
    seq: Sequence
    step: int | None = None
    path: Path | None = None

    def describe(self) -> str:
        at = f" at step {self.step} {json.dumps(self.seq.steps[self.step])[:200]}" if self.step is not None else ""
        saved = f" -> {self.path}" if self.path else ""
        return f"{self.how}: sequence {self.seq.id} ({len(self.seq.steps)} steps){at}{saved}"


@dataclass
class Stats:
    sequences: int = 0
    steps: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    heap_growth: list[int] = field(default_factory=list)
    processes: int = 0
    seconds: float = 0.0
    slack: int = HEAP_SLACK  # heap growth allowed per batch (heap_slack)

    def add(self, run: Run) -> None:
        self.processes += 1
        for outcome in run.results.values():
            self.sequences += 1
            for part in outcome.split():
                kind, _, n = part.rpartition(":")
                self.outcomes[kind] += int(n)
                self.steps += int(n)
        grown = heap_growth(run)
        if grown is not None:
            self.heap_growth.append(grown)

    def report(self) -> str:
        out = [f"API fuzzer: {self.sequences} sequences, {self.steps} steps in {self.processes} processes, "
               f"{self.seconds:.0f} s"]
        total = sum(self.outcomes.values()) or 1
        out.append("step outcomes: " + ", ".join(f"{k} {v} ({100 * v / total:.1f}%)" for k, v in self.outcomes.most_common()))
        if self.heap_growth:
            out.append(f"heap growth from a process's second pass to its later ones: max {max(self.heap_growth)} B, "
                       f"min {min(self.heap_growth)} B (slack {self.slack} B)")
        out.append(f"findings: {len(self.findings)}")
        out += ["  " + f.describe() for f in self.findings]
        return "\n".join(out)


class ApiFuzzer:
    def __init__(self, mp: MicroPython, seed: int, minimise: bool = True, save: bool = True,
                 log: Callable[[str], None] = lambda s: None) -> None:
        self.mp, self.seed, self.minimise, self.save, self.log = mp, seed, minimise, save, log
        self.stub = read_stub()
        self.stats = Stats(slack=heap_slack(mp))

    def sequence(self, sid: int) -> Sequence:
        return Sequence(sid, make_sequence(self.stub, self.seed, sid))

    def dies(self, seqs: list[Sequence]) -> bool:
        return run_seqs(self.mp, seqs, timeout=60, passes=1).died

    def investigate(self, seqs: list[Sequence], run: Run, how: str) -> None:
        self.log(f"sequences {seqs[0].id}..{seqs[-1].id}: {how}; locating it")
        ids = [s.id for s in seqs]
        if how.startswith("FAIL"):
            culprit = seqs[ids.index(int(how.split()[1]))]
            f = Finding(how, culprit)
        elif how.startswith("heap grew"):
            f = Finding(how, seqs[-1])  # the whole batch: replay it to find the leaking sequence
        else:
            suspect = run.suspect()
            upto = ids.index(suspect) + 1 if suspect is not None else len(seqs)
            culprit = seqs[upto - 1]
            if not self.dies([culprit]):  # set up by earlier sequences: run them as one
                window = seqs[:upto]
                window = shrink(window, self.dies, budget=30) if self.dies(window) else window
                culprit = Sequence(window[-1].id, [st for s in window for st in s.steps])
            f = Finding(how, culprit)
            if self.minimise and self.dies([culprit]):
                f.seq = Sequence(culprit.id, shrink(culprit.steps, lambda st: self.dies([Sequence(culprit.id, st)]),
                                                    budget=400))
            verbose = run_seqs(self.mp, [f.seq], verbose=True, timeout=60, passes=1)
            steps_started = [ln for ln in verbose.extra if ln.startswith("s ")]
            if steps_started:
                f.step = int(steps_started[-1].split()[2])
        if self.save:
            f.path = save_regression(f"api-{self.seed}-{f.seq.id}", {
                "found": f.how, "seed": self.seed, "step": f.step, "texts": TEXTS, "wip": WIP_NETS, "steps": f.seq.steps})
        self.stats.findings.append(f)
        self.log("  FINDING " + f.describe())

    def fuzz(self, count: int, batch: int = 100, start: int = 0) -> Stats:
        t0 = time.monotonic()
        for first in range(start, start + count, batch):
            seqs = [self.sequence(i) for i in range(first, min(first + batch, start + count))]
            while seqs:
                run = run_seqs(self.mp, seqs)
                self.stats.add(run)
                found = problems(run, self.stats.slack)
                for how in found:
                    self.investigate(seqs, run, how)
                suspect = run.suspect()
                if not run.died or suspect is None:
                    break
                seqs = seqs[[s.id for s in seqs].index(suspect) + 1:]
            if self.stats.processes % 10 == 0:
                self.log(f"{self.stats.sequences} sequences, {len(self.stats.findings)} findings, "
                         f"{time.monotonic() - t0:.0f} s")
        self.stats.seconds = time.monotonic() - t0
        return self.stats


# ---------------------------------------------------------------------------
# Threaded mode: several _thread threads in one process (api_thread_runner.py).

THREAD_RUNNER = FUZZ / "api_thread_runner.py"
# The nets threads run: Python layers Tag (in place), TagF (a new top), TagM (two bottoms),
# TagW (times weights it keeps from its ModelBin). The last one has weights, loaded in place
# (load_model(copy=False)) from a bytes object of its own at each load: TagW's and ncnn's
# MemoryData's read it at every forward, in whichever thread extracts, while other threads
# reload the net (the old buffer then goes) and collect.
THREAD_TEXTS = [
    "7767517\n3 3\nInput data 0 1 data\nTag t0 1 1 data a 0=2.0\nReLU r 1 1 a out\n",
    "7767517\n3 3\nInput data 0 1 data\nTagF f 1 1 data a 0=-1.5\nTag t 1 1 a out 0=0.5\n",
    "7767517\n3 4\nInput data 0 1 data\nSplit s 1 2 data a b\nTagM m 2 1 a b out\n",
    "7767517\n4 4\nInput data 0 1 data\nTagW w 1 1 data a 0=16\nMemoryData md 0 1 m 0=16\nTagM s 2 1 a m out\n",
]
# Per net kind, the floats of its .bin (None: weightless, loaded from DataReader(zeros=True)).
THREAD_WEIGHTS: list[list[float] | None] = [None, None, None, [((j * 5) % 11 - 5) * 0.25 + 0.5 for j in range(32)]]
# Inputs: float32 Mats without channel padding (the runner writes them through a memoryview).
THREAD_INPUTS = [[shape, [((j * 5 + i * 3) % 13 - 6) * 0.5 for j in range(n)]]
                 for i, (shape, n) in enumerate([([16], 16), ([4, 3], 12), ([4, 2, 2], 16), ([2, 2, 2, 2], 16)])]
SHARED_KINDS = [0, 2, 3]  # the kinds of the Nets every thread shares
# What a run's layers do: 0 nothing more, 1 raise ValueError(tag), 3 raise RuntimeError(tag),
# 2 gc.collect(), 4 sleep a millisecond.
MODES = [0] * 11 + [1] * 4 + [3] + [2] * 2 + [4] * 2


def reload_op(rng: random.Random, what: str, where: str, k: int) -> list[Any]:
    """A clear, close or reload op; a reload loads weights in place, or now and then copies them."""
    return [what, where, k] + ([rng.random() < 0.25] if what == "reload" else [])


def thread_sequence(rng: random.Random, own: set[int], disturber: bool) -> list[list[Any]]:
    """One sequence of one thread's ops; `own`: the slots of Nets the thread has (kept across its sequences)."""
    ops: list[list[Any]] = []
    for run in range(rng.randint(4, 14)):
        r = rng.random()
        if r < 0.40:
            if not own or rng.random() < 0.1:
                k = rng.randrange(3)
                ops.append(["net", k, rng.randrange(len(THREAD_TEXTS)), rng.choice([1, 1, 1, 2])])
                own.add(k)
            ops.append(["run", "own", rng.choice(sorted(own)), rng.randrange(len(THREAD_INPUTS)), rng.choice(MODES), run])
        elif r < 0.70:
            ops.append(["run", "shared", rng.randrange(len(SHARED_KINDS)), rng.randrange(len(THREAD_INPUTS)),
                        rng.choice(MODES), run])
        elif r < 0.74:
            ops.append(["run", "sharedex", rng.randrange(len(SHARED_KINDS)), rng.randrange(len(THREAD_INPUTS)), 0, run])
        elif r < 0.79 or (disturber and r < 0.85):
            ops.append(["gc"] if rng.random() < 0.7 else ["churn"])
        elif r < 0.82 or (disturber and r < 0.95):
            ops.append(reload_op(rng, rng.choice(["clear", "reload", "reload"]), "shared", rng.randrange(len(SHARED_KINDS))))
        elif r < 0.93 and own:
            k = rng.choice(sorted(own))
            what = rng.choice(["clear", "reload", "reload", "close"])
            ops.append(reload_op(rng, what, "own", k))
            if what == "close":
                own.discard(k)
        elif r < 0.97:  # a Net of its own through a Python reader every thread shares
            which = rng.randrange(2)
            if rng.random() < 0.5:  # from the start of its stream (another thread's load may be reading it)
                ops.append(["prdrewind", which])
            ops.append(["prd", which, run] if rng.random() < 0.95 else ["prdclose", which])
        else:
            ops.append(["sleep", rng.choice([0, 1, 2])])
    return ops


def thread_batch(seed: int, batch: int, threads: int, per_thread: int) -> list[dict[str, Any]]:
    """Each thread's sequences for one process; thread 0 clears and reloads the shared Nets most."""
    work = []
    for t in range(threads):
        rng = random.Random(f"api-threads-{seed}-{batch}-{t}")
        own: set[int] = set()
        work.append({"t": t, "seqs": [{"id": j, "ops": thread_sequence(rng, own, t == 0)} for j in range(per_thread)]})
    return work


def thread_payload(work: list[dict[str, Any]], passes: int, timeout_ms: int,
                   setup: dict[str, Any] | None = None) -> bytes:
    """setup: the texts, inputs, shared kinds and weights of a saved batch (default: this file's)."""
    head = {"threads": len(work), "passes": passes, "texts": THREAD_TEXTS, "inputs": THREAD_INPUTS,
            "shared": SHARED_KINDS, "weights": THREAD_WEIGHTS, "timeout_ms": timeout_ms, **(setup or {})}
    return b"".join(json.dumps(x).encode() + b"\n" for x in [head, *work])


@dataclass
class ThreadRun:
    run: Run
    progress: dict[int, str]  # thread -> its last "s <seq> <op>" line: where it was when the process ended

    def where(self, work: list[dict[str, Any]]) -> str:
        out = []
        for t, line in sorted(self.progress.items()):
            parts = line.split()
            if len(parts) == 3 and parts[0] == "s":
                seq, op = int(parts[1]), int(parts[2])
                out.append(f"t{t} in seq {seq} op {op} {json.dumps(work[t]['seqs'][seq]['ops'][op])}")
            else:
                out.append(f"t{t} {line or 'not started'}")
        return "; ".join(out)


def run_threads(mp: MicroPython, work: list[dict[str, Any]], passes: int = PASSES,
                setup: dict[str, Any] | None = None) -> ThreadRun:
    """One process running the threads of `work` `passes` times over."""
    ops = sum(len(s["ops"]) for w in work for s in w["seqs"])
    timeout = (40 if mp.valgrind else 1) * passes * (30 + 0.05 * ops)
    with tempfile.TemporaryDirectory(prefix="ncnn_mp_fuzz_") as d:
        batch, results = Path(d) / "batch", Path(d) / "results"
        batch.write_bytes(thread_payload(work, passes, int(timeout * 800), setup))
        try:
            r = limited(mp).run(THREAD_RUNNER, str(batch), str(results), timeout=timeout)
            run = Run(r.returncode, stderr=r.stderr)
        except pytest.fail.Exception as e:  # MicroPython.run's timeout
            run = Run(None, stderr=str(e))
        if results.exists():
            parse_results(results.read_text(errors="replace"), run)
        progress = {}
        for t in range(len(work)):
            f = Path(f"{results}.t{t}")
            lines = f.read_text(errors="replace").splitlines() if f.exists() else []
            progress[t] = lines[-1] if lines else ""
    return ThreadRun(run, progress)


@dataclass
class ThreadStats:
    batches: int = 0
    ops: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    findings: list[str] = field(default_factory=list)
    heap_growth: list[int] = field(default_factory=list)
    seconds: float = 0.0

    def report(self) -> str:
        total = sum(self.outcomes.values()) or 1
        out = [f"API fuzzer, threads: {self.batches} processes, {self.ops} ops per pass, {self.seconds:.0f} s",
               "op outcomes: " + ", ".join(f"{k} {v} ({100 * v / total:.1f}%)" for k, v in self.outcomes.most_common())]
        if self.heap_growth:
            out.append(f"heap growth after the second pass: max {max(self.heap_growth)} B, min {min(self.heap_growth)} B")
        out.append(f"findings: {len(self.findings)}")
        return "\n".join(out + ["  " + f for f in self.findings])


class ThreadFuzzer:
    """Batches of threads; a batch that fails is run again (a race need not repeat), saved
    under tests/fuzz/regressions/api-threads-<seed>-<batch>.json with its seed and every
    thread's sequences, and reported with where each thread was."""

    def __init__(self, mp: MicroPython, seed: int, threads: int, save: bool = True,
                 log: Callable[[str], None] = lambda s: None) -> None:
        self.mp, self.seed, self.threads, self.save, self.log = mp, seed, threads, save, log
        self.stats = ThreadStats()

    def fuzz(self, batches: int, per_thread: int, passes: int = PASSES, start: int = 0) -> ThreadStats:
        t0 = time.monotonic()
        for b in range(start, start + batches):
            work = thread_batch(self.seed, b, self.threads, per_thread)
            tr = run_threads(self.mp, work, passes)
            self.stats.batches += 1
            self.stats.ops += sum(len(s["ops"]) for w in work for s in w["seqs"])
            for ln in tr.run.extra:
                if ln.startswith("T "):
                    for part in ln.split()[2:]:
                        kind, _, n = part.rpartition(":")
                        self.stats.outcomes[kind] += int(n)
            grown = heap_growth(tr.run)
            if grown is not None:
                self.stats.heap_growth.append(grown)
            found = problems(tr.run, heap_slack(self.mp) * 2)
            if found:
                self.investigate(b, work, tr, found, passes)
        self.stats.seconds = time.monotonic() - t0
        return self.stats

    def investigate(self, b: int, work: list[dict[str, Any]], tr: ThreadRun, found: list[str], passes: int) -> None:
        again = sum(bool(problems(run_threads(self.mp, work, passes).run, heap_slack(self.mp) * 2)) for _ in range(2))
        where = tr.where(work) if tr.run.died else ""
        what = (f"seed {self.seed} batch {b} ({self.threads} threads; failed again in {again} of 2 reruns): "
                + "; ".join(found[:6]) + (f" (and {len(found) - 6} more)" if len(found) > 6 else ""))
        if where:
            what += f" -- threads were at: {where}"
        if self.save:
            path = save_regression(f"api-threads-{self.seed}-{b}", {
                "found": found, "seed": self.seed, "batch": b, "where": where, "threads": work,
                "texts": THREAD_TEXTS, "inputs": THREAD_INPUTS, "shared": SHARED_KINDS, "weights": THREAD_WEIGHTS})
            what += f" -> {path} (replay: tests/fuzz/api_fuzz.py --replay {path})"
        self.stats.findings.append(what)
        self.log("  FINDING " + what)


def replay(mp: MicroPython, path: Path, attempts: int = 3) -> list[str]:
    """Run a saved regression; what goes wrong (nothing: []). A threaded batch runs
    `attempts` times: a race need not show on every run."""
    data = json.loads(path.read_text())
    if "threads" in data:
        for _ in range(attempts):
            setup = {k: data[k] for k in ("texts", "inputs", "shared", "weights") if k in data}
            found = problems(run_threads(mp, data["threads"], setup=setup).run, heap_slack(mp) * 2)
            if found:
                return found
        return []
    return problems(run_seqs(mp, [Sequence(0, data["steps"])]), heap_slack(mp))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sequences", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="first sequence number")
    ap.add_argument("--batch", type=int, default=100, help="sequences per MicroPython process")
    ap.add_argument("--no-save", action="store_true", help="do not write regressions")
    ap.add_argument("--replay", type=Path, nargs="*", help="run saved regression files (all: no file named) instead")
    ap.add_argument("--threads", type=int, default=1,
                    help="N > 1: the threaded mode, N threads per process, --batch sequences per process")
    args = ap.parse_args(argv)
    mp = firmware()
    if args.replay is not None:
        failed = 0
        for p in args.replay or regressions("api"):
            found = replay(mp, p)
            print(p.name, "; ".join(found) or "ok")
            failed += bool(found)
        return 1 if failed else 0
    if args.threads > 1:
        per_thread = max(1, args.batch // args.threads)
        batches = -(-args.sequences // (per_thread * args.threads))
        tf = ThreadFuzzer(mp, args.seed, args.threads, save=not args.no_save, log=lambda s: print(s, flush=True))
        tstats = tf.fuzz(batches, per_thread, start=args.start)
        print(tstats.report())
        return 1 if tstats.findings else 0
    fz = ApiFuzzer(mp, args.seed, save=not args.no_save, log=lambda s: print(s, flush=True))
    stats = fz.fuzz(args.sequences, args.batch, args.start)
    print(stats.report())
    return 1 if stats.findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

# SPDX-License-Identifier: MIT
"""Which ncnn layers a model needs: its .param's layers, and those ncnn runs besides.

A model's .param names the layers it uses; ncnn runs more than those (its Mat helpers create
Padding, Packing, Cast, Quantize...; some layers create others; the Net converts layouts). Which
layer creates which is read from the pinned ncnn source by the build (ci/ncnn_layers.py) into
ncnn_layers.json beside this file, per CPU family's layer code (`arch`: x86 for the Unix firmware,
xtensa for the boards' generic layers, arm, riscv).
"""

from __future__ import annotations

import json
import struct
from functools import cache
from pathlib import Path
from typing import Any

TABLE = Path(__file__).resolve().parent / "ncnn_layers.json"


@cache
def _table() -> dict[str, Any]:
    table: dict[str, Any] = json.loads(TABLE.read_text())
    return table


def known_layers() -> tuple[str, ...]:
    """Every layer ncnn has, in LayerType order."""
    return tuple(_table()["known"])


def archs() -> tuple[str, ...]:
    return tuple(_table()["creates"])


Layer = tuple[str, dict[int, object]]  # a model's layer: its type, its param dict (id -> value)


def model_layers(param: Path) -> list[Layer]:
    """The layers a .param (text) or .param.bin holds, with their params; a type ncnn does
    not know (a custom layer) as written, or as 'custom #N' in a binary param."""
    data = param.read_bytes()
    layers: list[Layer] = []
    if data[:4] == struct.pack("<i", 7767517):  # binary: magic, counts, then per layer its type index
        layer_count = struct.unpack_from("<i", data, 4)[0]
        at = 12
        for _ in range(layer_count):
            index, bottoms, tops = struct.unpack_from("<iii", data, at)
            at += 12 + 4 * (bottoms + tops)
            params, at = _param_dict_bin(data, at)
            custom = index & (1 << 8)
            layers.append((f"custom #{index & 0xFF}" if custom else known_layers()[index], params))
        return layers
    lines = data.decode().split("\n")
    if lines[0].strip() != "7767517":
        raise ValueError(f"{param}: not an ncnn param (no magic 7767517)")
    for line in lines[2:]:
        words = line.split()
        if words:
            bottoms, tops = int(words[2]), int(words[3])
            params = {}
            for item in words[4 + bottoms + tops:]:
                key, _, value = item.partition("=")
                params[int(key)] = value
            layers.append((words[0], params))
    return layers


def model_layer_types(param: Path) -> list[str]:
    """The layer types a model uses, in order of first use."""
    return list(dict.fromkeys(t for t, _ in model_layers(param)))


def _param_dict_bin(data: bytes, at: int) -> tuple[dict[int, object], int]:
    """One layer's ParamDict in a .param.bin (ids and values, arrays, ended by -233), and
    where it ends."""
    params: dict[int, object] = {}
    while True:
        key = struct.unpack_from("<i", data, at)[0]
        at += 4
        if key == -233:
            return params, at
        if key <= -23300:  # an array: its length, then that many values
            n = struct.unpack_from("<i", data, at)[0]
            params[-key - 23300] = data[at + 4:at + 4 + 4 * n]
            at += 4 + 4 * n
        else:
            params[key] = struct.unpack_from("<i", data, at)[0]
            at += 4


INT8_LAYERS = frozenset({"Quantize", "Dequantize", "Requantize"})


def required(layers: list[Layer], arch: str) -> dict[str, str]:
    """The built-in layers a firmware must keep to run models made of `layers`, each with
    why: the model uses it, another layer creates it, or the Net does. A fused activation
    and the int8 conversions count only where a layer's params switch them on."""
    t = _table()
    if arch not in t["creates"]:
        raise ValueError(f"no layer table for arch {arch!r} (known: {', '.join(archs())})")
    activations = {int(k): v for k, v in t["activations"].items()}
    activated, int8 = frozenset(t["activated"]), frozenset(t["int8"])
    why: dict[str, str] = {}
    switched: dict[str, set[str]] = {}  # a layer type -> what its params switch on, over the model
    for layer, params in layers:
        if layer in known_layers():
            why.setdefault(layer, "the model")
        on = switched.setdefault(layer, set())
        if layer in activated and str(params.get(9, 0)) != "0":
            on.add(activations[int(str(params[9]))])
        if layer in int8 and str(params.get(8, 0)) != "0":
            on |= INT8_LAYERS
    for layer, reason in t["net"].items():
        why.setdefault(layer, reason)
    deps: dict[str, list[str]] = t["creates"][arch]
    todo = list(why)
    while todo:
        layer = todo.pop()
        made = set(deps.get(layer, ()))
        if layer in activated:
            made -= set(activations.values()) - switched.get(layer, set())
        if layer in int8:
            made -= INT8_LAYERS - switched.get(layer, set())
        for other in sorted(made):
            if other not in why:
                why[other] = f"{layer} creates it"
                todo.append(other)
    return why

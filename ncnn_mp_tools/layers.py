# SPDX-License-Identifier: MIT
"""Which ncnn layers a model needs, derived from ncnn's own sources.

A model's .param names the layers it uses; ncnn runs more than those. Its Mat helpers
(copy_make_border, convert_packing, cast_float32_to_float16, quantize_to_int8, ...) each
create a layer (Padding, Packing, Cast, Quantize, ...) and call through NULL when the build
left it out; some layers create others directly (create_layer_cpu(LayerType::Flatten)); and
the Net itself converts layouts with Packing and Cast. So the list is read from the pinned
ncnn source, for the layer code a profile's ncnn builds (its `ncnn_arch`) (a layer's generic .cpp, its arch
variant, and the arch headers these include), never kept by hand.
"""

from __future__ import annotations

import re
import struct
from functools import cache
from pathlib import Path

from ci.sources import ncnn_source

_LAYER_TYPE = re.compile(r"LayerType::(\w+)")
_INCLUDE = re.compile(r'^#include "(\w+\.h)"', re.M)


@cache
def known_layers() -> tuple[str, ...]:
    """Every layer ncnn has, in LayerType order (ncnn_add_layer's order in src/CMakeLists.txt)."""
    text = (ncnn_source() / "src" / "CMakeLists.txt").read_text()
    return tuple(re.findall(r"^ncnn_add_layer\((\w+)", text, re.M))


@cache
def _helpers() -> dict[str, frozenset[str]]:
    """mat.cpp's functions that create a layer: name -> the layer types."""
    helpers: dict[str, set[str]] = {}
    name = ""
    for line in (ncnn_source() / "src" / "mat.cpp").read_text().splitlines():
        head = re.match(r"^[A-Za-z].*?(\w+)\(", line)
        if head and not line.startswith(("#", "static")):
            name = head.group(1)
        for layer in _LAYER_TYPE.findall(line):
            helpers.setdefault(name, set()).add(layer)
    return {k: frozenset(v) for k, v in helpers.items()}


def _created_by(path: Path, seen: set[Path]) -> set[str]:
    """Layer types a source file (and the local headers it includes) creates."""
    if path in seen or not path.exists():
        return set()
    seen.add(path)
    text = path.read_text(errors="replace")
    made = set(_LAYER_TYPE.findall(text))
    for helper, layers in _helpers().items():
        if re.search(rf"\b{helper}\s*\(", text):
            made |= layers
    for header in _INCLUDE.findall(text):
        made |= _created_by(path.parent / header, seen)
    return made


@cache
def dependencies(arch: str) -> dict[str, frozenset[str]]:
    """Each layer type -> the layer types it creates when built for `arch` (x86, arm, ...)."""
    src = ncnn_source() / "src" / "layer"
    deps: dict[str, frozenset[str]] = {}
    for layer in known_layers():
        name = layer.lower()
        seen: set[Path] = set()
        made = _created_by(src / f"{name}.cpp", seen) | _created_by(src / arch / f"{name}_{arch}.cpp", seen)
        deps[layer] = frozenset(made - {layer, "CustomBit"})
    return deps


def net_layers() -> dict[str, str]:
    """What ncnn's Net runs whatever the model: its inputs, and its layout conversions."""
    text = (ncnn_source() / "src" / "net.cpp").read_text()
    needed = {"Input": "the Net's input blobs"}
    for helper, layers in _helpers().items():
        if re.search(rf"\b{helper}\s*\(", text):
            for layer in layers:
                needed.setdefault(layer, "the Net converts blob layouts")
    return needed


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


@cache
def _param_switched() -> tuple[dict[int, str], frozenset[str], frozenset[str]]:
    """Layers created only when a layer's params ask for them: the fused activation by
    activation_type (param 9: its number -> layer, from fused_activation.h) and ncnn's int8
    conversions by int8_scale_term (param 8); and which layers read each of the two."""
    src = ncnn_source() / "src" / "layer"
    text = (src / "fused_activation.h").read_text()
    activations = {int(n): t for n, t in re.findall(r"activation_type == (\d+)\)\s*\{\s*activation = "
                                                    r"ncnn::create_layer_cpu\(ncnn::LayerType::(\w+)\)", text)}
    def reading(pattern: str) -> frozenset[str]:
        return frozenset(layer for layer in known_layers()
                         if (src / f"{layer.lower()}.cpp").exists()
                         and pattern in (src / f"{layer.lower()}.cpp").read_text())
    return activations, reading("activation_type = pd.get(9"), reading("int8_scale_term = pd.get(8")


INT8_LAYERS = frozenset({"Quantize", "Dequantize", "Requantize"})


def required(layers: list[Layer], arch: str) -> dict[str, str]:
    """The built-in layers a firmware must keep to run models made of `layers`, each with
    why: the model uses it, another layer creates it, or the Net does. A fused activation
    and the int8 conversions count only where a layer's params switch them on."""
    activations, activated, int8 = _param_switched()
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
    for layer, reason in net_layers().items():
        why.setdefault(layer, reason)
    deps = dependencies(arch)
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

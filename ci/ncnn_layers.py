# SPDX-License-Identifier: MIT
"""Which ncnn layers create which, read from the pinned ncnn source: the table the tools ship.

ncnn_mp_tools/ncnn_layers.json, which ncnn_mp_tools/layers.py reads to tell what a model needs.

A model's .param names the layers it uses; ncnn runs more than those. Its Mat helpers
(copy_make_border, convert_packing, cast_float32_to_float16, quantize_to_int8, ...) each
create a layer (Padding, Packing, Cast, Quantize, ...) and call through NULL when the build
left it out; some layers create others directly (create_layer_cpu(LayerType::Flatten)); and
the Net itself converts layouts with Packing and Cast. So the table is read from the pinned
ncnn source, for the layer code each build has (its `ncnn_arch`: a layer's generic .cpp, its arch
variant, and the arch headers these include), never kept by hand, and regenerated with

    python3 -m ci.ncnn_layers        (tests/test_tools_package.py checks the committed one is current)
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from ci.common import REPO
from ci.sources import ncnn_source

TABLE = REPO / "ncnn_mp_tools" / "ncnn_layers.json"
# The layer code of the builds: the Unix firmware's (x86), the boards' (xtensa: the generic C++
# layers, ci/profiles.toml), and ncnn's other CPU families a user's board may build.
ARCHS = ("arm", "riscv", "x86", "xtensa")

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



def table() -> dict[str, Any]:
    """What ncnn_mp_tools/layers.py reads: the layer types in LayerType order, what the Net runs,
    the params that switch layers on, and per arch what each layer creates."""
    activations, activated, int8 = _param_switched()
    return {
        "ncnn": ncnn_source().name,
        "known": list(known_layers()),
        "net": net_layers(),
        "activations": {str(k): v for k, v in sorted(activations.items())},
        "activated": sorted(activated),
        "int8": sorted(int8),
        "creates": {arch: {k: sorted(v) for k, v in dependencies(arch).items() if v} for arch in ARCHS},
    }


def text() -> str:
    return json.dumps(table(), indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    TABLE.write_text(text())
    print(TABLE)

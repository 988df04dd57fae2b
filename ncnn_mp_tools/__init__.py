# SPDX-License-Identifier: MIT
"""ncnn_mp's desktop tools: `ncnn-mp COMMAND` once installed, or `python3 -m ncnn_mp_tools.<module>`.

Installed with `pip install .` from a checkout, or from the wheel `make dist` writes. They never
import the build (ci/); ci imports them.

- cli: the `ncnn-mp` command (model, preflight, compare, run, quantize, romfs, param-to-bin, models)
- convert: an ONNX (or ncnn) model to a board in one command (ncnn-mp model, make model)
- preflight: will models run on a firmware, in how much memory
- compare: a model on the firmware against the CPython ncnn wheel, blob by blob
- run: a MicroPython script on a firmware (a board's under QEMU)
- quantize_int8: an fp32 ncnn model to int8 (per layer, or int8 between layers), fp16 or fp32 weights
- romfs_pack: model files into a MicroPython ROMFS image with aligned data (weights used in place)
- param_to_bin: a .param to the binary form an ncnn without NCNN_STRING reads
- layers: the ncnn layers a model needs (ncnn_layers.json: read from ncnn's source by ci/ncnn_layers.py)
- target, device, qemu: which firmware, running the probes (probes/) on it, QEMU's boards
- errors: one-line failures
- models: the published models the examples use, fetched by name, pinned by sha256 (models.toml; make models)
"""

from __future__ import annotations


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ncnn_mp_tools")
    except PackageNotFoundError:  # (run from a checkout, not installed)
        return "checkout"


__version__ = _version()

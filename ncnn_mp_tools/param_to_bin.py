# SPDX-License-Identifier: MIT
"""Convert an ncnn .param text file to the binary form `Net.load_param_bin` reads.

For ncnn built with NCNN_STRING=OFF (small MCU builds): such an ncnn has no layer or blob
names, so it cannot read .param text. The binary form numbers everything instead:
- each layer's type is its built-in type index; a type ncnn does not have (a custom layer)
  becomes ncnn_mp.CUSTOM_BIT | n, n counting the custom types in order of first use, and
  the script registers it with net.register_custom_layer(ncnn_mp.CUSTOM_BIT | n, Class);
- each blob is its index, in order of first appearance as a layer's output, and the
  script feeds and reads blobs by those numbers: ex.input(0, mat), ex.extract(5).

Runs under CPython (type indexes from the `ncnn` wheel) and under MicroPython with ncnn_mp
(from ncnn_mp.Layer.type_to_index):
    python3 -m ncnn_mp_tools.param_to_bin model.param model.param.bin
    micropython ncnn_mp_tools/param_to_bin.py model.param model.param.bin
prints the blob and custom-type numbering it chose.
"""

import struct
import sys

if False:  # for type checkers only: MicroPython has no typing module
    from typing import Callable

CUSTOM_BIT = 1 << 8  # ncnn::LayerType::CustomBit
MAGIC = 7767517


def _type_index_function() -> "Callable[[str], int]":
    if sys.implementation.name == "micropython":
        import ncnn_mp

        def index(name: str) -> int:
            try:
                return ncnn_mp.Layer.type_to_index(name)
            except ValueError:
                return -1
        return index
    import ncnn

    return ncnn.layer_to_index  # type: ignore[no-any-return]


def _is_float(text: str) -> bool:
    # ncnn's own rule (vstr_is_float in paramdict.cpp): a '.' or an exponent makes a float.
    return any(c in text for c in ".eE") and not text.startswith(("0x", "0X"))


def _value(text: str) -> bytes:
    return struct.pack("<f", float(text)) if _is_float(text) else struct.pack("<i", int(text))


def _params(tokens: list[str], where: str) -> bytes:
    out = []
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep:
            raise ValueError("%s: parameter %r is not key=value" % (where, token))
        pid = int(key)
        if pid <= -23300:  # an array: -23300-id=count,v1,v2,...
            items = value.split(",")
            count = int(items[0])
            if count != len(items) - 1:
                raise ValueError("%s: array %s says %d values, has %d" % (where, key, count, len(items) - 1))
            out.append(struct.pack("<ii", pid, count) + b"".join(_value(v) for v in items[1:]))
        else:
            if value.startswith('"'):
                raise ValueError("%s: string parameters are not supported" % where)
            out.append(struct.pack("<i", pid) + _value(value))
    out.append(struct.pack("<i", -233))
    return b"".join(out)


def convert(text: str, type_index: "Callable[[str], int] | None" = None) -> "tuple[bytes, dict[str, int], dict[str, int]]":
    """Return (param_bin_bytes, {blob name: index}, {custom type name: typeindex})."""
    type_index = type_index or _type_index_function()
    lines = [line.split() for line in text.splitlines()]
    lines = [t for t in lines if t]
    if not lines or lines[0] != [str(MAGIC)]:
        raise ValueError("not an ncnn .param file (the first line must be %d)" % MAGIC)
    layer_count, blob_count = int(lines[1][0]), int(lines[1][1])
    if len(lines) - 2 != layer_count:
        raise ValueError("the header says %d layers, the file has %d" % (layer_count, len(lines) - 2))
    blobs: dict[str, int] = {}
    custom: dict[str, int] = {}
    out = [struct.pack("<iii", MAGIC, layer_count, blob_count)]
    for tokens in lines[2:]:
        type_name, name = tokens[0], tokens[1]
        nb, nt = int(tokens[2]), int(tokens[3])
        bottoms, tops = tokens[4:4 + nb], tokens[4 + nb:4 + nb + nt]
        index = type_index(type_name)
        if index < 0:
            index = custom.setdefault(type_name, CUSTOM_BIT | len(custom))
        for b in bottoms:
            if b not in blobs:
                raise ValueError("layer %s reads blob %r before any layer writes it" % (name, b))
        for t in tops:
            blobs[t] = len(blobs)
        out.append(struct.pack("<iii", index, nb, nt))
        out.append(struct.pack("<%di" % (nb + nt), *[blobs[b] for b in bottoms + tops]))
        out.append(_params(tokens[4 + nb + nt:], "layer " + name))
    if len(blobs) > blob_count:  # fewer is fine: ncnn sizes its blob table by the header
        raise ValueError("the header says %d blobs, the layers write %d" % (blob_count, len(blobs)))
    return b"".join(out), blobs, custom


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python3 -m ncnn_mp_tools.param_to_bin model.param model.param.bin")
        return 2
    with open(argv[1]) as f:
        data, blobs, custom = convert(f.read())
    with open(argv[2], "wb") as f:
        f.write(data)
    for name, index in blobs.items():
        print("blob", index, name)
    for name, index in custom.items():
        print("custom layer type", index, name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

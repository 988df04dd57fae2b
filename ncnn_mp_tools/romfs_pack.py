# SPDX-License-Identifier: MIT
"""Pack model files into a MicroPython ROMFS image with aligned file data: weights used in place.

ncnn_mp can keep such weights where they lie in flash (`net.load_model(f, copy=False)`).

    python3 -m ncnn_mp_tools.romfs_pack -o romfs.img model.param model.bin [more files...]

Every file's data starts at a multiple of --align bytes (default 16) from the image's
start: flash the image at an address that is a multiple of it (a board's "romfs"
partition is; on the QEMU boards it goes to 0x21000000 or 0x22000000). MicroPython 1.25's
own ROMFS builder does not align file data, and ncnn reads weights as floats in place: an
unaligned .bin makes load_model(copy=False) raise.

The format (MicroPython's extmod/vfs_rom.c): records of a varuint kind, a varuint payload
length and the payload; varuints are big-endian, 7 bits a byte, high bit set on all but
the last, and may be padded with leading 0x80 bytes. That padding is how data is aligned
here. The image is one filesystem record (kind 0x14a6b1, "RM1") holding a file record
(kind 5: name length, name, then records) per file, whose data is a verbatim record (2), and
a directory record (kind 4: name length, name, then its records) per folder. The command puts
files in the root directory, named by their base names; pack() takes paths with folders too
("lib/ncnn_mp_lib/nanodet.mpy": what an import from /rom/lib finds).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

KIND_FILESYSTEM = 0x14A6B1
KIND_PADDING = 1
KIND_DATA = 2
KIND_DIRECTORY = 4
KIND_FILE = 5
# The filesystem record's payload length, written at a fixed width (padded), so that
# the payload starts at a known offset: the 3 bytes of the kind, then these 5.
LENGTH_WIDTH = 5
PAYLOAD_START = 3 + LENGTH_WIDTH


def varuint(n: int, width: int = 0) -> bytes:
    """n as a varuint, padded with leading 0x80 bytes to `width` bytes."""
    groups = [n & 0x7F]
    n >>= 7
    while n:
        groups.append(n & 0x7F)
        n >>= 7
    groups += [0] * (width - len(groups))
    return bytes(g | 0x80 for g in reversed(groups[1:])) + bytes([groups[0]])


def file_record(name: bytes, data: bytes, at: int, align: int) -> bytes:
    """The record of one file placed at image offset `at`, its data aligned to `align`."""
    for pad in range(align + 8):
        # The data record's length varuint, padded by `pad` bytes, shifts the data.
        data_record = varuint(KIND_DATA) + varuint(len(data), pad + 1)
        payload = varuint(len(name)) + name + data_record
        head = varuint(KIND_FILE) + varuint(len(payload) + len(data))
        if (at + len(head) + len(payload)) % align == 0:
            return head + payload + data
    raise AssertionError("no padding aligns the data")  # (a varuint may grow by 1 byte: align + 8 tries suffice)


Tree = dict[str, "bytes | Tree"]  # a folder: name -> a file's contents or a folder


def tree_of(files: dict[str, bytes]) -> Tree:
    """`files` (path -> contents, folders separated by '/') as nested folders, in order."""
    root: Tree = {}
    for path, data in files.items():
        parts = path.split("/")
        if not all(parts):
            raise ValueError(f"{path!r}: a path of names separated by single '/' (no leading or trailing '/')")
        folder = root
        for part in parts[:-1]:
            sub = folder.setdefault(part, {})
            if not isinstance(sub, dict):
                raise ValueError(f"{path!r}: {part!r} is a file, not a folder")
            folder = sub
        if parts[-1] in folder:
            raise ValueError(f"{path!r}: a second entry of that name")
        folder[parts[-1]] = data
    return root


def records(tree: Tree, at: int, align: int) -> bytes:
    """The records of a folder's entries, placed at image offset `at`."""
    body = bytearray()
    for name, node in tree.items():
        encoded = name.encode()
        if isinstance(node, dict):
            # The directory record's length at a fixed width, as the filesystem's: its entries'
            # offsets (and so their data's alignment) do not depend on their own length.
            prefix = varuint(len(encoded)) + encoded
            head = len(varuint(KIND_DIRECTORY)) + LENGTH_WIDTH
            inner = records(node, at + len(body) + head + len(prefix), align)
            body += varuint(KIND_DIRECTORY) + varuint(len(prefix) + len(inner), LENGTH_WIDTH) + prefix + inner
        else:
            body += file_record(encoded, node, at + len(body), align)
    return bytes(body)


def pack(files: dict[str, bytes], align: int = 16) -> bytes:
    """A ROMFS image of `files` (path -> contents; 'a/b.py' is b.py in folder a), every file's
    data aligned to `align`."""
    if align < 1:
        raise ValueError("align must be positive")
    body = bytearray(records(tree_of(files), PAYLOAD_START, align))
    if (PAYLOAD_START + len(body)) % 2:  # the whole record must have an even size:
        body += varuint(KIND_PADDING) + varuint(1) + b"\0"  # a padding record of 3 bytes
    return bytes(varuint(KIND_FILESYSTEM) + varuint(len(body), LENGTH_WIDTH) + body)


def files_of(paths: list[Path]) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for path in paths:
        if path.name in files:
            raise ValueError(f"{path}: a second file named {path.name!r}")
        files[path.name] = path.read_bytes()
    return files


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", type=Path, required=True, help="the image to write")
    ap.add_argument("--align", type=int, default=16, help="alignment of every file's data (bytes)")
    ap.add_argument("files", type=Path, nargs="+")
    args = ap.parse_args(argv)
    image = pack(files_of(args.files), args.align)
    args.output.write_bytes(image)
    print(f"{args.output}: {len(image)} bytes, {len(args.files)} files, data aligned to {args.align}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

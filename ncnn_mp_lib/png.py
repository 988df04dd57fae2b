# SPDX-License-Identifier: MIT
"""Writes 8-bit RGB pixels as a PNG file, under MicroPython and CPython alike.

The image data is compressed with `deflate` where the firmware can (MicroPython's
`deflate.DeflateIO` writes only when built with MICROPY_PY_DEFLATE_COMPRESS; CPython: zlib),
else stored in uncompressed deflate blocks, which every PNG reader takes.
"""

import struct

try:
    import zlib  # CPython

    def _zlib(data: bytes) -> bytes:
        return zlib.compress(data, 9)
except ImportError:  # MicroPython
    import io

    import deflate  # type: ignore[import-not-found]

    def _zlib(data: bytes) -> bytes:
        if hasattr(deflate.DeflateIO, "write"):
            out = io.BytesIO()
            with deflate.DeflateIO(out, deflate.ZLIB) as d:
                d.write(data)
            return out.getvalue()
        return _stored(data)

from binascii import crc32


def _adler32(data: bytes) -> int:
    a, b = 1, 0
    for i in range(0, len(data), 4096):  # (sums stay small between the modulo steps)
        for byte in data[i:i + 4096]:
            a += byte
            b += a
        a %= 65521
        b %= 65521
    return b << 16 | a


def _stored(data: bytes) -> bytes:
    """A zlib stream of `data` in stored (uncompressed) deflate blocks of up to 65,535 bytes."""
    out = bytearray(b"\x78\x01")
    for at in range(0, max(len(data), 1), 65535):
        block = data[at:at + 65535]
        final = at + 65535 >= len(data)
        out += struct.pack("<BHH", final, len(block), len(block) ^ 0xFFFF) + block
    return bytes(out + struct.pack(">I", _adler32(data)))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc32(kind + data) & 0xFFFFFFFF)


def write_png(path: str, w: int, h: int, rgb: "bytes | bytearray") -> None:
    """rgb: w * h * 3 bytes, rows top to bottom."""
    rows = bytearray()
    for y in range(h):
        rows += b"\x00" + rgb[y * w * 3:(y + 1) * w * 3]  # filter type 0 (none) for each row
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)))  # 8-bit RGB
        f.write(_chunk(b"IDAT", _zlib(bytes(rows))))
        f.write(_chunk(b"IEND", b""))

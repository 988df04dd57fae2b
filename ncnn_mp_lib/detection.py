# SPDX-License-Identifier: MIT
"""What classifiers and detectors share after the network: the k best scores, the few grid
cells whose best score reaches a threshold (a detector's hot loop: every cell, every class),
box overlap, and non-maximum suppression. Plain Python on sequences of floats
(memoryview(mat) under MicroPython, the wheel's Mats under CPython), with viper fast paths
for the two scans where the firmware has viper.

The fast paths compare scores as raw 32-bit words: for floats >= 0 the IEEE 754 bit patterns
are ordered as the numbers are, so a viper loop over ptr32 finds the best scores without
making a float object. Negative scores (sign bit set) are skipped, so they serve scores
that are probabilities (sigmoid, softmax) with a threshold above 0; anything else takes the
plain loop. Both give the same answers, ties in index order.
"""

import struct

try:
    from typing import Any, Sequence, TypeVar

    # score, x0, y0, x1, y1, then what the detector adds (a class, landmarks)
    Box = TypeVar("Box", bound=tuple[Any, ...])
except ImportError:  # MicroPython: the annotations are strings it never reads
    pass

try:
    import array

    import micropython  # type: ignore[import-not-found]

    @micropython.viper  # type: ignore[untyped-decorator]
    def _scan_words(scores, out, params) -> int:  # type: ignore[no-untyped-def]
        # params: offset, rows, cols, step, threshold's bits. out: (row, col) pairs.
        p = ptr32(scores)  # type: ignore[name-defined]  # noqa: F821 (a viper built-in)
        o = ptr32(out)  # type: ignore[name-defined]  # noqa: F821
        q = ptr32(params)  # type: ignore[name-defined]  # noqa: F821
        at = q[0]
        rows = q[1]
        cols = q[2]
        step = q[3]
        threshold = q[4]
        found = 0
        for r in range(rows):
            best = -1
            col = 0
            for c in range(cols):
                v = p[at + c]
                if v >> 31 == 0 and v > best:  # (all compared words are below 2**31)
                    best = v
                    col = c
            if best >= threshold:
                o[2 * found] = r
                o[2 * found + 1] = col
                found += 1
            at += step
        return found

    @micropython.viper  # type: ignore[untyped-decorator]
    def _top_words(scores, n: int, out, k: int) -> int:  # type: ignore[no-untyped-def]
        # k passes, each taking the best word below the last one taken (equal: a later index).
        p = ptr32(scores)  # type: ignore[name-defined]  # noqa: F821
        o = ptr32(out)  # type: ignore[name-defined]  # noqa: F821
        low = 1
        low = (low << 31) - 1  # 0x7FFFFFFF made at run time (as a literal it is no small int on 32 bits)
        last = low
        last_i = -1
        for j in range(k):
            best = -1
            best_i = -1
            for i in range(n):
                v = p[i]
                if v >> 31:
                    if v & low:
                        continue
                    v = 0  # -0.0 ties with 0.0
                if v > best and (v < last or (v == last and i > last_i)):
                    best = v
                    best_i = i
            if best_i < 0:
                return j
            o[j] = best_i
            last = best
            last_i = best_i
        return k

    FAST = True
except (ImportError, AttributeError):  # CPython, or a firmware without viper
    FAST = False


class Quantized:
    """An int8 network output (Net.output_int8_scale: a model quantized with int8 outputs) as
    the floats it stands for, q / scale: a sequence the decoders read as they read a float
    output's memoryview, a quarter of its RAM. data: the signed bytes (memoryview(mat) of an
    int8 Mat, which reads them unsigned, or a sequence of signed ints)."""

    def __init__(self, data: "Sequence[int]", scale: float) -> None:
        if not (type(scale) in (int, float) and scale > 0):
            raise ValueError("Quantized: scale must be a positive number (Net.output_int8_scale)")
        self.data = data
        self.scale = float(scale)

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, i: int) -> float:
        v = self.data[i]
        return (v - 256 if v > 127 else v) / self.scale


def _scan_python(scores: "Sequence[float]", offset: int, rows: int, cols: int, step: int,
                 threshold: float) -> "list[tuple[int, int]]":
    found = []
    at = offset
    for r in range(rows):
        best, col = scores[at], 0
        for c in range(1, cols):
            if scores[at + c] > best:
                best, col = scores[at + c], c
        if best >= threshold:
            found.append((r, col))
        at += step
    return found


def _words(scores: "Sequence[float]") -> bool:
    """Whether the viper loops may read scores: a memoryview of float32 (they index it with
    ptr32, one 32-bit word an element). Anything else takes the plain loop."""
    return (isinstance(scores, memoryview) and len(scores) > 0 and isinstance(scores[0], float)
            and len(bytes(scores[:1])) == 4)


def _ints(*values: object) -> bool:
    return all(type(v) is int for v in values)


def _scan_fits(n: int, offset: int, rows: int, cols: int, step: int) -> bool:
    """Whether every score _scan_words reads lies in the n given: it reads cols words at
    offset, offset + step, ... for each row, unchecked. (Where not, the plain loop runs and
    raises IndexError as Python indexing does, or wraps a negative index as Python does.)"""
    if not _ints(offset, rows, cols, step) or rows < 0 or cols < 1 or step < 0 or offset < 0:
        return False
    return rows == 0 or offset + (rows - 1) * step + cols <= n


def candidates(scores: "Sequence[float]", offset: int, rows: int, cols: int, step: int, threshold: float,
               fast: bool = True) -> "list[tuple[int, int, float]]":
    """(row, column, score) of every row whose best score reaches threshold: `rows` rows of
    `cols` scores, the first at `offset`, each `step` elements after the one before.
    fast=False takes the plain loop (to compare the two); the fast one runs only where every
    index it reads is checked to lie in scores first, and gives the same answer."""
    if (fast and FAST and type(threshold) in (int, float) and threshold > 0 and _words(scores)
            and _scan_fits(len(scores), offset, rows, cols, step)):
        out = array.array("I", bytes(8 * rows))
        params = array.array("I", [offset, rows, cols, step, struct.unpack("<I", struct.pack("<f", threshold))[0]])
        n = _scan_words(scores, out, params)
        pairs = [(out[2 * i], out[2 * i + 1]) for i in range(n)]
    else:
        pairs = _scan_python(scores, offset, rows, cols, step, threshold)
    return [(r, c, scores[offset + r * step + c]) for r, c in pairs]


def top_k(scores: "Sequence[float]", k: int, fast: bool = True) -> "list[int]":
    """The indexes of the k best scores, best first (equal scores: the lower index first).
    The fast path reads the float32 words of a memoryview, at most min(k, len) passes."""
    if fast and FAST and type(k) is int and k >= 0 and _words(scores):
        n = min(k, len(scores))
        out = array.array("I", bytes(4 * n))
        if _top_words(scores, len(scores), out, n) == n:  # (fewer: negative scores, which the words cannot order)
            return list(out)
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]  # (MicroPython's sort is not stable)


def box_iou(a: "Sequence[float]", b: "Sequence[float]") -> float:
    """Intersection over union of two (x0, y0, x1, y1) boxes."""
    ax0, ay0, ax1, ay1 = a
    bx0, by0, bx1, by1 = b
    inter = max(0.0, min(ax1, bx1) - max(ax0, bx0)) * max(0.0, min(ay1, by1) - max(ay0, by0))
    union = (ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter
    return inter / union if union > 0 else 0.0


def nms(boxes: "list[Box]", threshold: float, same: "int | None" = None) -> "list[Box]":
    """The highest-scoring boxes (score first, then x0, y0, x1, y1), none overlapping a kept
    one by more than threshold; with `same`, only boxes whose element `same` is equal (their
    class) suppress each other."""
    kept: "list[Box]" = []
    for b in sorted(boxes, key=lambda b: -b[0]):
        if all(box_iou(b[1:5], k[1:5]) <= threshold for k in kept if same is None or k[same] == b[same]):
            kept.append(b)
    return kept

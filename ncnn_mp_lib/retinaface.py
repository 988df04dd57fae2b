# SPDX-License-Identifier: MIT
"""Faces from RetinaFace MobileNet-0.25 (insightface's mnet.25, as ncnn model): the network's
per-stride outputs decoded into boxes, scores and five landmarks, then non-maximum
suppression. Plain Python on sequences of floats, so the same code runs under MicroPython
on ncnn_mp's Mats (memoryview(mat)) and under CPython on the wheel's; the scan over every
anchor takes ncnn_mp_lib/detection.py's viper path where it can.

Outputs, per stride 32, 16, 8 (two anchors a position):
  face_rpn_cls_prob_reshape_stride{s}   4 channels: 2 background, then 2 face probabilities
  face_rpn_bbox_pred_stride{s}          8 channels: dx, dy, dw, dh for each anchor
  face_rpn_landmark_pred_stride{s}     20 channels: 5 (x, y) offsets for each anchor
Boxes come out in the network input's pixels: scale them to the photo's.
"""

import math

from .detection import candidates, nms

try:
    from typing import Mapping, Sequence

    # score, x0, y0, x1, y1, five (x, y) landmarks
    Face = tuple[float, float, float, float, float, list[tuple[float, float]]]
except ImportError:  # MicroPython: the annotations are strings it never reads
    pass

STRIDES = (32, 16, 8)
# Anchor sizes (pixels) at each stride: a base of 16 scaled by (32, 16), (8, 4), (2, 1).
ANCHOR_SIZES = {32: (512.0, 256.0), 16: (128.0, 64.0), 8: (32.0, 16.0)}
BASE = 16.0


def output_names(stride: int) -> "tuple[str, str, str]":
    return ("face_rpn_cls_prob_reshape_stride%d" % stride, "face_rpn_bbox_pred_stride%d" % stride,
            "face_rpn_landmark_pred_stride%d" % stride)


def decode(stride: int, w: int, h: int, step: int, cls: "Sequence[float]", bbox: "Sequence[float]",
           landmark: "Sequence[float]", threshold: float = 0.8, fast: bool = True) -> "list[Face]":
    """Faces at one stride: (score, x0, y0, x1, y1, [(x, y) * 5]) for every anchor whose face
    probability reaches threshold. cls, bbox, landmark: the three outputs' elements, a channel
    every `step` elements (a Mat's cstep: memoryview(mat) has the padding between channels).
    fast=False: the plain scan instead of the viper one (ncnn_mp_lib/detection.py)."""
    plane = step
    faces: "list[Face]" = []
    for a, size in enumerate(ANCHOR_SIZES[stride]):
        # The face probabilities of anchor a: channel 2 + a, one column a cell.
        for k, _, score in candidates(cls, (2 + a) * plane, h * w, 1, 1, threshold, fast):
            # The anchor: a size x size square centred on the cell's base square.
            cx = k % w * stride + BASE * 0.5
            cy = k // w * stride + BASE * 0.5
            dx, dy, dw, dh = (bbox[(a * 4 + n) * plane + k] for n in range(4))
            px, py = cx + size * dx, cy + size * dy
            pw, ph = size * math.exp(dw), size * math.exp(dh)
            points = [(cx + (size + 1) * landmark[(a * 10 + 2 * n) * plane + k],
                       cy + (size + 1) * landmark[(a * 10 + 2 * n + 1) * plane + k]) for n in range(5)]
            faces.append((score, px - pw * 0.5, py - ph * 0.5, px + pw * 0.5, py + ph * 0.5, points))
    return faces


def detect(outputs: "Mapping[int, tuple[int, int, int, Sequence[float], Sequence[float], Sequence[float]]]",
           threshold: float = 0.8, nms_threshold: float = 0.4, fast: bool = True) -> "list[Face]":
    """outputs: {stride: (w, h, step, cls, bbox, landmark)}. Faces after NMS, best first."""
    faces: "list[Face]" = []
    for stride in STRIDES:
        w, h, step, cls, bbox, landmark = outputs[stride]
        faces += decode(stride, w, h, step, cls, bbox, landmark, threshold, fast)
    return nms(faces, nms_threshold)

# SPDX-License-Identifier: MIT
"""Objects from NanoDet-m (RangiLyu's nanodet, as ncnn model): the network's per-stride
class scores and box-side distributions decoded into boxes with COCO classes, then
non-maximum suppression per class. Plain Python on sequences of floats, so the same code
runs under MicroPython on ncnn_mp's Mats (memoryview(mat)) and under CPython on the wheel's;
the scan over every cell and class takes ncnn_mp_lib/detection.py's viper path where it can.

Outputs, per stride 8, 16, 32 (one row per grid cell, row-major over the input's grid):
  cls   80 columns: each class's score (after a sigmoid)
  dis   32 columns: for the left, top, right and bottom sides, 8 logits over the distances
        0..7 strides from the cell's centre (generalized focal loss: the distance is the
        expectation of their softmax)
Boxes come out in the network input's pixels: undo the letterbox to get the photo's.
"""

import math

from .detection import candidates, nms

try:
    from typing import Mapping, Sequence

    # score, x0, y0, x1, y1, class index
    Object = tuple[float, float, float, float, float, int]
except ImportError:  # MicroPython: the annotations are strings it never reads
    pass

STRIDES = (8, 16, 32)
OUTPUTS = {8: ("792", "795"), 16: ("814", "817"), 32: ("836", "839")}  # (cls, dis) blob names
INPUT = "input.1"
MEAN = [103.53, 116.28, 123.675]  # B, G, R
NORM = [0.017429, 0.017507, 0.017125]
CLASSES = 80
BINS = 8  # distances 0..7 strides: reg_max 7

LABELS = (
    "person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat", "traffic light",
    "fire hydrant", "stop sign", "parking meter", "bench", "bird", "cat", "dog", "horse", "sheep", "cow",
    "elephant", "bear", "zebra", "giraffe", "backpack", "umbrella", "handbag", "tie", "suitcase", "frisbee",
    "skis", "snowboard", "sports ball", "kite", "baseball bat", "baseball glove", "skateboard", "surfboard",
    "tennis racket", "bottle", "wine glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple",
    "sandwich", "orange", "broccoli", "carrot", "hot dog", "pizza", "donut", "cake", "chair", "couch",
    "potted plant", "bed", "dining table", "toilet", "tv", "laptop", "mouse", "remote", "keyboard",
    "cell phone", "microwave", "oven", "toaster", "sink", "refrigerator", "book", "clock", "vase", "scissors",
    "teddy bear", "hair drier", "toothbrush")


def _distance(dis: "Sequence[float]", at: int) -> float:
    """The expected distance (in strides) of one side: softmax over BINS logits from `at`."""
    logits = [dis[at + k] for k in range(BINS)]
    top = max(logits)
    weights = [math.exp(v - top) for v in logits]
    return sum(k * w for k, w in enumerate(weights)) / sum(weights)


def decode(stride: int, grid_w: int, cells: int, cls: "Sequence[float]", dis: "Sequence[float]",
           threshold: float = 0.4, fast: bool = True) -> "list[Object]":
    """Objects at one stride: (score, x0, y0, x1, y1, class) for every cell whose best class
    score reaches threshold. grid_w: cells in a row of the grid (input width / stride)."""
    found: "list[Object]" = []
    for cell, label, score in candidates(cls, 0, cells, CLASSES, CLASSES, threshold, fast):
        cx = (cell % grid_w + 0.5) * stride
        cy = (cell // grid_w + 0.5) * stride
        left, top, right, bottom = (_distance(dis, cell * 4 * BINS + side * BINS) * stride for side in range(4))
        found.append((score, cx - left, cy - top, cx + right, cy + bottom, label))
    return found


def detect(outputs: "Mapping[int, tuple[int, int, Sequence[float], Sequence[float]]]", threshold: float = 0.4,
           nms_threshold: float = 0.5, fast: bool = True) -> "list[Object]":
    """outputs: {stride: (grid_w, cells, cls, dis)}. Objects after NMS per class, best first."""
    found: "list[Object]" = []
    for stride in STRIDES:
        grid_w, cells, cls, dis = outputs[stride]
        found += decode(stride, grid_w, cells, cls, dis, threshold, fast)
    return nms(found, nms_threshold, same=5)


def letterbox(w: int, h: int, side: int = 320) -> "tuple[int, int, int, int, float]":
    """How a w x h photo goes into the network: resized to (rw, rh) so its longer side is
    `side`, then padded to multiples of 32 (the largest stride), left/top by (px, py).
    Returns (rw, rh, px, py, scale)."""
    scale = side / max(w, h)
    rw, rh = int(w * scale + 0.5), int(h * scale + 0.5)
    return rw, rh, ((rw + 31) // 32 * 32 - rw) // 2, ((rh + 31) // 32 * 32 - rh) // 2, scale


def to_photo(objects: "list[Object]", w: int, h: int, px: int, py: int, scale: float) -> "list[Object]":
    """The objects' boxes in the photo's pixels (the letterbox undone, clipped to the photo)."""

    def clip(v: float, top: int) -> float:
        return min(max(v, 0.0), float(top))

    return [(o[0], clip((o[1] - px) / scale, w), clip((o[2] - py) / scale, h), clip((o[3] - px) / scale, w),
             clip((o[4] - py) / scale, h), o[5]) for o in objects]

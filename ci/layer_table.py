# SPDX-License-Identifier: MIT
"""docs/layers.md: every layer type in ncnn's registry, and what ncnn_mp checks before ncnn runs it.

The registry is the built ncnn's layer_type_enum.h.

    python3 -m ci.layer_table [--write]     print the table (or write docs/layers.md)

Which types a Net wraps is read from ncnn_mp/guard/shape_guard.cpp's guarded(); what each check
is, from the table below. tests/test_layer_table.py keeps docs/layers.md equal to what this
prints, and fails when ncnn's registry gains a type this table does not describe.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "layers.md"
GUARD = REPO / "ncnn_mp" / "guard" / "shape_guard.cpp"

ANY = "any input: each element on its own, or a shape the layer derives from its input"
# What the guard checks per type (shape_guard.cpp, shape_rules.cpp), or why a type needs no check.
CHECKS: dict[str, str] = {
    "AbsVal": ANY, "BNLL": ANY, "Dropout": ANY, "ELU": ANY, "Exp": ANY, "Log": ANY, "Power": ANY,
    "ReLU": ANY + " (wrapped for int8: one without a slope passes int8 on, docs/models.md \"int8 between layers\")",
    "Sigmoid": ANY, "TanH": ANY, "Threshold": ANY, "UnaryOp": ANY, "Clip": ANY,
    "HardSigmoid": ANY, "SELU": ANY, "HardSwish": ANY, "Mish": ANY, "Swish": ANY, "Softplus": ANY,
    "GELU": ANY, "Erf": ANY, "CELU": ANY, "Shrink": ANY, "Cast": ANY, "Packing": ANY, "DeepCopy": ANY, "Input": ANY, "Split": ANY, "Flatten": ANY,
    "Softmax": ANY, "Reduction": ANY, "MVN": ANY, "LRN": ANY, "Squeeze": ANY,
    "ExpandDims": ANY, "Permute": ANY, "Tile": ANY, "Reorg": ANY, "PixelShuffle": ANY, "GLU": ANY,
    "Fold": ANY, "Unfold": ANY, "CumulativeSum": ANY, "Diag": ANY, "Flip": ANY, "StatisticsPooling": ANY,
    "Unfold": "an image; its pads (given, or SAME) none negative and the dilated kernel fits the padded input",
    "Fold": "an output (output_w/h, padded) the dilated kernel fits, under 2^28 values; rows of the values its "
            "windows take, one for each kernel position",
    "Spectrogram": ANY, "InverseSpectrogram": ANY, "MemoryData": "no input; its size from its parameters "
    "(reads of no or negative size refused at load, standalone)",
    "ArgMax": "not built in this ncnn (no creator): Layer() refuses it",
    "SPP": "not built in this ncnn (no creator): Layer() refuses it",
    "Convolution": "input channels its weights imply (or a vector of them, 1x1); an image; its pads (given, or "
    "SAME) none negative and the dilated kernel fits the padded input; int8 weights only with int8 scales; dynamic weights: the weight and bias inputs "
    "fit the input",
    "ConvolutionDepthWise": "as Convolution, per group",
    "Deconvolution": "input channels its weights imply; an image; dynamic weights as Convolution",
    "DeconvolutionDepthWise": "as Deconvolution, per group",
    "Convolution1D": "rows (dims 1 or 2) of the channels its weights imply; the kernel fits the padded length; "
    "dynamic weights fit",
    "ConvolutionDepthWise1D": "as Convolution1D, per group",
    "Deconvolution1D": "rows of the channels its weights imply; dynamic weights fit",
    "DeconvolutionDepthWise1D": "as Deconvolution1D, per group",
    "Convolution3D": "a volume (dims 3 or 4) of the channels its weights imply",
    "ConvolutionDepthWise3D": "as Convolution3D, per group",
    "Deconvolution3D": "a volume of the channels its weights imply",
    "DeconvolutionDepthWise3D": "as Deconvolution3D, per group",
    "DeformableConv2D": "input channels its weights imply",
    "InnerProduct": "as many values as its weights take (or rows of them); int8 weights only with int8 scales",
    "BatchNorm": "one parameter per channel (w, h or c by dims)",
    "Scale": "one parameter per channel; a second input of scales covers them (and no bias asked for then)",
    "Bias": "one parameter per channel",
    "PReLU": "one slope per channel (or a single slope)",
    "InstanceNorm": "its channels",
    "GroupNorm": "the channels its parameter names (normalised in place)",
    "LayerNorm": "affine_size values at a time: w, w*h or w*h*d",
    "RMSNorm": "as LayerNorm",
    "Normalize": "one scale per channel, unless shared",
    "Concat": "inputs that match outside the axis",
    "Eltwise": "two or more inputs of one shape; a SUM's coefficients (param 1), one per input",
    "BinaryOp": "two inputs that broadcast",
    "Pooling": "its pads by pad_mode (given, to a whole stride, SAME) none negative, and the window fits the padded "
               "input (docs/internals.md: padding, one rule)",
    "Padding": "its pads none negative (in w, h, d or channels), a reflected one shallower than the input",
    "Pooling1D": "rows; its pads (given, the tail, SAME) none negative, the window fits the padded length, "
                 "fewer than 2^28 values padded",
    "Pooling3D": "a volume; its pads (given, the tail, SAME) none negative, the window fits the padded input, "
                 "fewer than 2^28 values padded",
    "Slice": "its pieces, cut as ncnn cuts them (by its slices or its indices), lie in the input, each 1 or more "
             "long; as many outputs as pieces (up to 16)",
    "Gemm": "the inner size (K) of the input operands, and of a constant one, agree; a constant C covers the "
            "output's rows and columns",
    "MatMul": "A's width is B's inner size; batches equal or 1",
    "Embed": "a table as large as num_output * input_dim (at load)",
    "RNN": "steps as wide as a weight row; states of num_output per direction",
    "GRU": "as RNN",
    "LSTM": "as RNN; the cell state as wide as hidden_size",
    "MultiHeadAttention": "query, key and value rows as wide as their projections, as many value rows as key "
                          "rows; a mask (5=1) a row of the keys for each query, one channel or one per head; a "
                          "kv cache (7=1) a head's width, its heads, the value's as long as the key's",
    "SDPA": "key heads divide the query's; keys as wide as queries; values cover the keys; a mask (5=1) as wide "
            "as past and current keys, a row per query, one channel or one per head; a kv cache (7=1) of the key's "
            "and value's widths and heads, the value's as long as the key's",
    "GridSample": "an image or volume, and a grid of its dims with a point's components along w (or in channels)",
    "Proposal": "score, bbox and im_info sized for ncnn's 9 anchors",
    "CopyTo": "the source lies inside the destination at its offsets",
    "DetectionOutput": "a priorbox of 4 values a prior with variances; location and confidence cover the priors; "
    "top_k not negative",
    "ShuffleChannel": "channels a multiple of the groups",
    "Quantize": "one scale per row (dims 2) or channel, where it has more than one",
    "Dequantize": "one scale and bias per row or channel, where it has more than one",
    "Requantize": "one scale in, scale out and bias per row or channel, where it has more than one",
    "RotaryEmbed": "cos and sin tables with a row per position and half the input's width (all of it where "
                   "the cos table is that wide)",
    "Noop": "blob counts only",
    "Crop": "its region (offsets and sizes, numpy-style starts/ends/axes, a reference blob's shape or ints, "
            "expressions) resolved as ncnn does lies in the input, 1 or more long each way",
    "Interp": "an output size (output_w/h, the scales times the input, a reference blob's, or its expression's) "
              "of 1 or more each way, fewer than 2^28 values in all",
    "Reshape": "the shape from its parameters or expression (0 the input's extent, -1 the rest) resolved as "
               "ncnn does: every extent 1 or more, as many values as the input (batches: ncnn's own check)",
    "Einsum": "each input of as many dims as its term has letters, a letter one size in all; a trace (ii) "
              "of a square matrix",
    "Spectrogram": "a row at least n_fft long once padded (center), deeper than a reflected border; fewer than "
                   "2^28 output values",
    "InverseSpectrogram": "a volume of frames (h) of two values (w) in n_fft / 2 + 1 or at least n_fft channels; "
                          "an output of 1 or more values, fewer than 2^28",
    "PriorBox": "blob counts only",
    "PSROIPooling": "blob counts only (ncnn checks its channels)",
    "ROIAlign": "blob counts only",
    "ROIPooling": "blob counts only",
    "YoloDetectionOutput": "blob counts only (ncnn checks the channels)",
    "Yolov3DetectionOutput": "blob counts only",
}


def registry(include: Path) -> list[str]:
    """The layer types of the built ncnn, in typeindex order."""
    text = (include / "ncnn" / "layer_type_enum.h").read_text()
    return re.findall(r"^(\w+) = \d+,", text, re.M)


def net_guarded() -> set[str]:
    """The types ncnn_mp's Nets wrap (shape_guard.cpp's guarded())."""
    src = GUARD.read_text()
    body = src[src.index("bool guarded(int typeindex)"):]
    body = body[:body.index("\n}\n")]
    return set(re.findall(r"case ncnn::LayerType::(\w+):", body))


def table(types: list[str]) -> str:
    guarded = net_guarded()
    lines = [
        "# Layer types and what ncnn_mp checks before ncnn runs them",
        "",
        "Generated by `python3 -m ci.layer_table --write` from the built ncnn's layer registry",
        "(`layer_type_enum.h`) and `ncnn_mp/guard/shape_guard.cpp`; `tests/test_layer_table.py` keeps it current.",
        "",
        "- **In a Net**: the Net wraps the layer (`GuardLayer`): an extract refuses a forward that does not",
        "  fit with ValueError naming the layer. Other layers run as ncnn runs them.",
        "- **Standalone** (`Layer(type)`): every layer is wrapped, and every forward's blob counts are checked",
        "  against `ncnn_mp/guard/arity.cpp` (a one-blob layer takes one input and gives one output).",
        "- A layer from the model file is trusted where it says \"not checked\": load only models from a",
        "  trusted exporter there (docs/limits.md).",
        "",
        "| typeindex | type | in a Net | what is checked |",
        "|---:|---|---|---|",
    ]
    for i, name in enumerate(types):
        lines.append(f"| {i} | {name} | {'wrapped' if name in guarded else '-'} | {CHECKS.get(name, '(undescribed)')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    from ci.ncnn_build import ncnn_prefix

    text = table(registry(ncnn_prefix("unix") / "include"))
    if "--write" in argv:
        DOC.parent.mkdir(exist_ok=True)
        DOC.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

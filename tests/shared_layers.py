# SPDX-License-Identifier: MIT
"""Custom layers whose one source runs under both ncnn_mp (MicroPython) and the CPython
`ncnn` wheel: tests/test_oracle.py runs the same models through both and compares.

Only what both bindings offer is used: pd.get, mb.load, mat[i], w/h/c/cstep, create,
clone_from, and forward(self, bottom(s), top(s), opt) filling the tops.
"""

import sys

# By the interpreter, not by trying the import: in a checkout, CPython would find the
# folder ncnn_mp/ (the C sources) and import it as an empty namespace package.
if sys.implementation.name == "micropython":
    import ncnn_mp as ncnn
else:
    import ncnn  # type: ignore[no-redef]  # the CPython wheel


class PyInnerProduct(ncnn.Layer):
    """ncnn's InnerProduct (no activation), in Python: replaces the built-in in a net."""

    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def load_param(self, pd):
        self.num_output = pd.get(0, 0)
        self.bias_term = pd.get(1, 0)
        self.weight_data_size = pd.get(2, 0)
        return 0

    def load_model(self, mb):
        self.weight = mb.load(self.weight_data_size, 0).clone()
        self.bias = mb.load(self.num_output, 1).clone() if self.bias_term else None
        return 0

    def forward(self, bottom, top, opt):
        # The input's elements in order, skipping the padding between channels.
        plane = bottom.w * bottom.h
        x = [bottom[c * bottom.cstep + i] for c in range(bottom.c) for i in range(plane)]
        n = len(x)
        top.create(self.num_output)
        w = self.weight
        for o in range(self.num_output):
            s = self.bias[o] if self.bias is not None else 0.0
            base = o * n
            for i in range(n):
                s += w[base + i] * x[i]
            top[o] = s
        return 0


class SumDiff(ncnn.Layer):
    """Two bottoms in, two tops out: a + b and a - b (1-D)."""

    def __init__(self):
        super().__init__()
        self.one_blob_only = False

    def forward(self, bottoms, tops, opt):
        a, b = bottoms[0], bottoms[1]
        tops[0].create(a.w)
        tops[1].create(a.w)
        for i in range(a.w):
            tops[0][i] = a[i] + b[i]
            tops[1][i] = a[i] - b[i]
        return 0


class RowSums(ncnn.Layer):
    """Not in place, and the shape changes: a (w, h) Mat becomes h sums (1-D)."""

    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, top, opt):
        top.create(bottom.h)
        for y in range(bottom.h):
            s = 0.0
            for x in range(bottom.w):
                s += bottom[y * bottom.w + x]
            top[y] = s * 0.5
        return 0

# SPDX-License-Identifier: MIT
"""The digits demo's custom layer, written once for both ncnn_mp (MicroPython) and the
CPython `ncnn` wheel: the same source registers with either binding."""

import sys

# By the interpreter, not by trying the import: in a checkout, CPython would find the
# folder ncnn_mp/ (the C sources) and import it as an empty namespace package.
if sys.implementation.name == "micropython":
    import ncnn_mp as ncnn
else:
    import ncnn  # type: ignore[no-redef]  # the CPython wheel


class Standardize(ncnn.Layer):
    """(x - mean) * scale per element: scikit-learn's StandardScaler as an ncnn layer.

    .param line:  Standardize  std  1 1 data std  0=64      (0 = element count)
    .bin:         64 float32 means, then 64 float32 scales (1 / std), raw.
    """

    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.count = 0

    def load_param(self, pd: "ncnn.ParamDict") -> int:
        self.count = pd.get(0, 0)
        return 0 if self.count > 0 else -1

    def load_model(self, mb: "ncnn.ModelBin") -> int:
        # Copies: the ModelBin is lent for this call only.
        self.mean = mb.load(self.count, 1).clone()
        self.scale = mb.load(self.count, 1).clone()
        return 0

    def forward_inplace(self, blob: "ncnn.Mat", opt: "ncnn.Option") -> int:
        mean, scale = self.mean, self.scale
        for i in range(self.count):
            blob[i] = (blob[i] - mean[i]) * scale[i]
        return 0

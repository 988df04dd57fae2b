# SPDX-License-Identifier: MIT
"""Train a small handwritten-digit classifier and export it in ncnn's format (CPython).

The data set is the 8x8 digits that ship inside scikit-learn, so nothing is
downloaded. The network is  Input(8x8) -> Standardize -> InnerProduct(32) -> ReLU
-> InnerProduct(10) -> Softmax. Standardize is a custom layer written in Python
(examples/digits_layers.py): scikit-learn's StandardScaler, with its mean and
scale stored in the .bin like any layer's weights. The model sees raw pixels (0..16).

    PYTHONPATH=. python3 examples/make_digits_model.py OUTDIR    (from the checkout's root: it
                                                                  imports ncnn_mp_tools; make demo runs it)

writes OUTDIR/digits.param, OUTDIR/digits.bin, and OUTDIR/digits_test.bin (the
held-out test images as 64 bytes each, followed by one label byte each) plus
OUTDIR/digits.param.bin (the binary params, for ncnn built with NCNN_STRING=OFF: blob
0 is the input, blob 5 the output, Standardize is custom type ncnn_mp.CUSTOM_BIT | 0),
OUTDIR/digits_test.txt (the count and the accuracy scikit-learn reached on it) and
OUTDIR/digits_test_proba.f32 (scikit-learn's probabilities for them, float32).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

from ncnn_mp_tools.param_to_bin import convert

HIDDEN = 32
PARAM = """7767517
6 6
Input            data    0 1 data 0=8 1=8 2=1
Standardize      std     1 1 data std 0=64
InnerProduct     fc1     1 1 std fc1 0={hidden} 1=1 2={w1}
ReLU             relu1   1 1 fc1 relu1
InnerProduct     fc2     1 1 relu1 fc2 0=10 1=1 2={w2}
Softmax          prob    1 1 fc2 prob
"""


Arrays = tuple[np.ndarray, ...]


def train(seed: int = 0) -> tuple[Arrays, float]:
    """mean, scale, w1, b1, w2, b2, the test images, labels and probabilities, and the test accuracy."""
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.uint8)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.25, random_state=seed,
                                                        stratify=y)
    scaler = StandardScaler().fit(x_train)
    mlp = MLPClassifier(hidden_layer_sizes=(HIDDEN,), activation="relu", max_iter=600,
                        random_state=seed).fit(scaler.transform(x_train), y_train)
    accuracy = float(mlp.score(scaler.transform(x_test), y_test))
    proba = mlp.predict_proba(scaler.transform(x_test))
    return (scaler.mean_, 1 / scaler.scale_, mlp.coefs_[0].T, mlp.intercepts_[0], mlp.coefs_[1].T,
            mlp.intercepts_[1], x_test, y_test, proba), accuracy


def ncnn_weights(w: np.ndarray) -> bytes:
    """An InnerProduct weight blob: ncnn's 4-byte tag (0 = raw float32), then the data."""
    return struct.pack("<I", 0) + np.ascontiguousarray(w, dtype="<f4").tobytes()


def main(outdir: Path) -> None:
    (mean, scale, w1, b1, w2, b2, x_test, y_test, proba), accuracy = train()
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "digits.param").write_text(PARAM.format(hidden=HIDDEN, w1=w1.size, w2=w2.size))
    with open(outdir / "digits.bin", "wb") as f:
        f.write(np.asarray(mean, dtype="<f4").tobytes())  # Standardize: raw float32, read with type 1
        f.write(np.asarray(scale, dtype="<f4").tobytes())
        for w, b in [(w1, b1), (w2, b2)]:
            f.write(ncnn_weights(w))
            f.write(np.asarray(b, dtype="<f4").tobytes())  # bias: raw float32, no tag
    with open(outdir / "digits_test.bin", "wb") as f:
        f.write(x_test.astype(np.uint8).tobytes())
        f.write(y_test.astype(np.uint8).tobytes())
    (outdir / "digits_test.txt").write_text(f"{len(y_test)} {accuracy:.6f}\n")
    (outdir / "digits_test_proba.f32").write_bytes(np.asarray(proba, dtype="<f4").tobytes())
    param_bin, _, _ = convert((outdir / "digits.param").read_text())
    (outdir / "digits.param.bin").write_bytes(param_bin)  # last: build scripts take it as the stamp
    print(f"wrote {outdir}/digits.param, digits.bin ({len(y_test)} test images, "
          f"scikit-learn accuracy {accuracy:.4f})")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))

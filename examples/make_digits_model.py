"""Train a small handwritten-digit classifier and export it in ncnn's format (CPython).

The data set is the 8x8 digits that ship inside scikit-learn, so nothing is
downloaded. The network is  Input(8x8) -> InnerProduct(32) -> ReLU ->
InnerProduct(10) -> Softmax; the pixel standardisation learnt by StandardScaler
is folded into the first InnerProduct, so the exported model sees raw pixels (0..16).

    python examples/make_digits_model.py OUTDIR

writes OUTDIR/digits.param, OUTDIR/digits.bin, and OUTDIR/digits_test.bin (the
held-out test images as 64 bytes each, followed by one label byte each) plus
OUTDIR/digits_test.txt (the count and the accuracy scikit-learn reached on it).
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

HIDDEN = 32
PARAM = """7767517
5 5
Input            data    0 1 data 0=8 1=8 2=1
InnerProduct     fc1     1 1 data fc1 0={hidden} 1=1 2={w1}
ReLU             relu1   1 1 fc1 relu1
InnerProduct     fc2     1 1 relu1 fc2 0=10 1=1 2={w2}
Softmax          prob    1 1 fc2 prob
"""


Arrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def train(seed: int = 0) -> tuple[Arrays, float]:
    """The folded weights w1, b1, w2, b2, the test images and labels, and the test accuracy."""
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.uint8)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.25, random_state=seed,
                                                        stratify=y)
    scaler = StandardScaler().fit(x_train)
    mlp = MLPClassifier(hidden_layer_sizes=(HIDDEN,), activation="relu", max_iter=600,
                        random_state=seed).fit(scaler.transform(x_train), y_train)
    accuracy = float(mlp.score(scaler.transform(x_test), y_test))
    # Fold (x - mean) / scale into fc1:  W (x - m) / s + b  =  (W / s) x + (b - W (m / s)).
    w1 = mlp.coefs_[0].T / scaler.scale_[None, :]
    b1 = mlp.intercepts_[0] - w1 @ scaler.mean_
    w2 = mlp.coefs_[1].T
    b2 = mlp.intercepts_[1]
    return (w1, b1, w2, b2, x_test, y_test), accuracy


def ncnn_weights(w: np.ndarray) -> bytes:
    """An InnerProduct weight blob: ncnn's 4-byte tag (0 = raw float32), then the data."""
    return struct.pack("<I", 0) + np.ascontiguousarray(w, dtype="<f4").tobytes()


def main(outdir: Path) -> None:
    (w1, b1, w2, b2, x_test, y_test), accuracy = train()
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "digits.param").write_text(PARAM.format(hidden=HIDDEN, w1=w1.size, w2=w2.size))
    with open(outdir / "digits.bin", "wb") as f:
        for w, b in [(w1, b1), (w2, b2)]:
            f.write(ncnn_weights(w))
            f.write(np.asarray(b, dtype="<f4").tobytes())  # bias: raw float32, no tag
    with open(outdir / "digits_test.bin", "wb") as f:
        f.write(x_test.astype(np.uint8).tobytes())
        f.write(y_test.astype(np.uint8).tobytes())
    (outdir / "digits_test.txt").write_text(f"{len(y_test)} {accuracy:.6f}\n")
    print(f"wrote {outdir}/digits.param, digits.bin ({len(y_test)} test images, "
          f"scikit-learn accuracy {accuracy:.4f})")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))

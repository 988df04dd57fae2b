# SPDX-License-Identifier: MIT
"""Handwritten-digit recognition with ncnn_mp, on MicroPython.

    micropython examples/digits_demo.py MODEL_DIR

MODEL_DIR holds what examples/make_digits_model.py wrote: the network
(digits.param / digits.bin) and the held-out test images. `make demo` does both.
The network's first layer, Standardize, is Python code (examples/digits_layers.py)
that ncnn calls while it runs the model.
"""

import sys
import time

import ncnn_mp
from digits_layers import Standardize

SHADES = " .:-=+*#%@"


def ascii_digit(pixels: bytes) -> list[str]:
    """An 8x8 image with values 0..16 as eight lines of text."""
    return ["".join(SHADES[min(9, p * 10 // 17)] * 2 for p in pixels[r * 8:r * 8 + 8]) for r in range(8)]


def classify(net: ncnn_mp.Net, pixels: bytes) -> tuple[int, float]:
    image = ncnn_mp.Mat(8, 8, 1)
    floats = memoryview(image)  # the Mat's own storage, as float32: no copy
    for i in range(64):
        floats[i] = pixels[i]
    # A with block frees the Extractor's blobs at once, not at the next garbage collection.
    with net.create_extractor() as ex:
        ex.input("data", image)
        out = ex.extract("prob")
        # A memoryview holds only the data pointer, not the Mat: keep the Mat named while
        # the view is used, or the GC may free it (and ncnn's data) under the view.
        prob = memoryview(out)
        best = 0
        for k in range(1, 10):
            if prob[k] > prob[best]:
                best = k
        return best, prob[best]


def main(model_dir: str) -> None:
    net = ncnn_mp.Net()
    net.opt.num_threads = 1
    net.register_custom_layer("Standardize", Standardize)  # before load_param: ncnn creates it then
    net.load_param(model_dir + "/digits.param")
    net.load_model(model_dir + "/digits.bin")
    with open(model_dir + "/digits_test.txt") as f:
        count_text, sklearn_accuracy = f.read().split()
    count = int(count_text)
    with open(model_dir + "/digits_test.bin", "rb") as f:
        data = f.read()
    images, labels = data[:count * 64], data[count * 64:]

    print("ncnn_mp", ncnn_mp.version(), "- digits classifier, inputs", net.input_names(),
          "outputs", net.output_names())
    print("custom layers written in Python, alive in the net:", ncnn_mp.live_custom_layers())
    correct = 0
    start = time.time_ns()
    predictions = []
    for i in range(count):
        label, score = classify(net, images[i * 64:i * 64 + 64])
        predictions.append((label, score))
        correct += label == labels[i]
    elapsed_us = (time.time_ns() - start) / 1000

    for i in range(3):
        label, score = predictions[i]
        print()
        for line in ascii_digit(images[i * 64:i * 64 + 64]):
            print("   ", line)
        print("    predicted %d (p=%.3f), true %d" % (label, score, labels[i]))
    print()
    print("accuracy on %d held-out digits: %.1f%% (scikit-learn, same model: %.1f%%)"
          % (count, 100 * correct / count, 100 * float(sklearn_accuracy)))
    print("mean time per image (Mat + extractor + inference): %.1f us" % (elapsed_us / count))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    main(sys.argv[1])

# SPDX-License-Identifier: MIT
# MicroPython side of `make soak` (tests/soak/soak.py runs it): a mixed workload for a
# given number of seconds, printing one line of figures every interval. Per round: the
# digits model loaded from text and from binary params, extracts through several Python
# layers, a layer that raises every few rounds, Extractors left to the GC, random
# gc.collect() calls, and Nets created and dropped.
import gc
import random
import sys
import time

import ncnn_mp

# (the test helpers: tests/mp is on MICROPYPATH, which `make soak` and tests/test_soak.py set)
from mptest import DIGITS, DIGITS_MODEL, DIGITS_PARAM, MEMORY_IS_TOOLS, STALE_NETS, Standardize, read, settle

seconds, interval = int(sys.argv[1]), int(sys.argv[2])
random.seed(1)
param_text, param_bin = read(DIGITS_PARAM), read(DIGITS + "/digits.param.bin")
weights, images = read(DIGITS_MODEL), read(DIGITS + "/digits_test.bin")


class Add(ncnn_mp.Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def load_param(self, pd):
        self.k = pd.get(0, 1.0)

    def forward_inplace(self, blob, opt):
        for i in range(blob.w):
            blob[i] = blob[i] + self.k
        if random.random() < 0.01:
            gc.collect()  # inside ncnn's extract


class Fails(Add):
    def forward_inplace(self, blob, opt):
        raise ValueError("planned failure")


CHAIN = """7767517
5 5
Input data 0 1 data 0=4
Add a 1 1 data a 0=1.0
Add b 1 1 a b 0=2.0
%s c 1 1 b c 0=3.0
Add d 1 1 c d 0=4.0
"""


def image(i):
    m = ncnn_mp.Mat(8, 8, 1)
    for j in range(64):
        m[j] = images[i * 64 + j]
    return m


def one_round(n):
    text = ncnn_mp.Net()
    text.register_custom_layer("Standardize", Standardize)
    text.load_param(ncnn_mp.DataReader(from_memory=param_text))
    text.load_model(weights)
    binary = ncnn_mp.Net()
    binary.register_custom_layer(ncnn_mp.CUSTOM_BIT | 0, Standardize)
    binary.load_param_bin(param_bin)
    binary.load_model(weights)
    for k in range(5):
        i = (n * 5 + k) % 450
        with text.create_extractor() as ex:
            ex.input("data", image(i))
            a = ex.extract("prob")
        ex = binary.create_extractor()  # not closed: the GC frees it
        ex.input(0, image(i))
        b = ex.extract(5)
        assert max(abs(a[j] - b[j]) for j in range(10)) < 1e-5
    chain = ncnn_mp.Net()
    chain.register_custom_layer("Add", Add)
    chain.register_custom_layer("Fails", Fails)
    chain.load_param(ncnn_mp.DataReader(from_memory=CHAIN % ("Fails" if n % 7 == 0 else "Add")))
    chain.load_model(ncnn_mp.DataReader(zeros=True))
    x = ncnn_mp.Mat(4)
    x.fill(0.0)
    try:
        with chain.create_extractor() as ex:
            ex.input("data", x)
            out = ex.extract("d")
        assert out[0] == 10.0, out[0]
    except ValueError:
        assert n % 7 == 0
    if random.random() < 0.3:
        text.close()  # the rest are dropped for the GC
    if random.random() < 0.2:
        gc.collect()


start = time.ticks_ms()
next_report, rounds = 0, 0
while True:
    elapsed = time.ticks_diff(time.ticks_ms(), start) / 1000
    if elapsed >= next_report:
        live = settle()
        print("t=%d rounds=%d heap=%d live_layers=%d" % (elapsed, rounds, gc.mem_alloc(), live))
        next_report += interval
    if elapsed >= seconds:
        break
    one_round(rounds)
    rounds += 1
# What the driver may not judge: the conservative GC's stale words, and an RSS that is
# the tool's own under valgrind or the sanitizers (ASan's quarantine alone keeps up to 256 MB).
print("done rounds=%d stale_nets_allowed=%d rss_is_tools=%d" % (rounds, STALE_NETS, MEMORY_IS_TOOLS))

# SPDX-License-Identifier: MIT
"""Allocator(counting=True): the bytes of blobs and workspace ncnn takes through it, counted
(in_use, peak, reset_peak), and each misuse a clear exception with the process still well."""

from __future__ import annotations

from conftest import MNIST_FILES, MicroPython, shared_models

SCRIPT = """
import ncnn_mp
a = ncnn_mp.Allocator(counting=True)
print("new", a.in_use, a.peak, a)
net = ncnn_mp.Net()
net.opt.set_blob_allocator(a)
net.opt.set_workspace_allocator(a)
net.load_param({param!r})
net.load_model({weights!r})
x = ncnn_mp.Mat(28, 28, 1)
x.fill(0.5)
with net.create_extractor() as ex:
    ex.input("data", x)
    out = ex.extract("fc")
    during = a.in_use
print("peak holds conv0's output", a.peak >= 28 * 28 * 8 * 4, "in use during", during > 0)
del out
import gc
gc.collect()
print("after", a.in_use <= during)
a.reset_peak()
print("reset", a.peak == a.in_use)
def check(label, f):
    try:
        f()
        print(label, "-> no error")
    except Exception as e:
        print(label, "->", type(e).__name__ + ":", e)
pool = ncnn_mp.Allocator()
print("pool", pool.in_use, pool.peak)
check("pool reset_peak", pool.reset_peak)
check("counting and unlocked", lambda: ncnn_mp.Allocator(True, counting=True))
def assign():
    a.peak = 0
check("assign peak", assign)
net.close()
a.close()
check("peak after close", lambda: a.peak)
print("still well", ncnn_mp.Allocator(counting=True).in_use)
"""

EXPECTED = """peak holds conv0's output True in use during True
after True
reset True
pool None None
pool reset_peak -> ValueError: Allocator.reset_peak: only a counting allocator or an arena (Allocator(counting=True), Allocator(arena=size)) has a peak
counting and unlocked -> ValueError: Allocator(): give one of unlocked=, counting= and arena=, not two
assign peak -> AttributeError: Allocator.peak: read-only
peak after close -> ValueError: Allocator.peak: the Allocator was closed
still well 0
"""


def test_counting_allocator(micropython: MicroPython) -> None:
    mnist = shared_models("mnist", *MNIST_FILES)
    out = micropython.check(SCRIPT.format(param=str(mnist / "mnist.param"), weights=str(mnist / "mnist.bin")))
    first, rest = out.split("\n", 1)
    assert first == "new 0 0 <Allocator counting>", first
    assert rest == EXPECTED, rest

# SPDX-License-Identifier: MIT
"""Net.layers() and Net.blobs() against the CPython wheel's on the same params: every layer's
name, type, type index, bottoms and tops, every blob's name, producer and consumer, and
the shape hints a param gives (the digits model's .param written with one here)."""

from __future__ import annotations

import ast
from pathlib import Path

import ncnn
import pytest

from conftest import MNIST_FILES, MicroPython, shared_models

SCRIPT = """
import ncnn_mp
net = ncnn_mp.Net()
print(repr((net.layers(), net.blobs())))
net.load_param({path!r})
print(repr([(l["name"], l["type"], l["typeindex"], l["bottoms"], l["tops"]) for l in net.layers()]))
print(repr([(b["name"], b["producer"], b["consumer"], b["shape"]) for b in net.blobs()]))
"""


def wheel_graph(param: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    net = ncnn.Net()
    assert net.load_param(str(param)) == 0
    layers = [(l.name, l.type, l.typeindex, list(l.bottoms), list(l.tops)) for l in net.layers()]
    blobs = [(b.name, b.producer, b.consumer, shape_of(b.shape)) for b in net.blobs()]
    return layers, blobs


def shape_of(m: ncnn.Mat) -> tuple[int, ...] | None:
    """A shape hint as ncnn_mp gives it: a Mat's constructor arguments, None without one."""
    by_dims = {1: (m.w,), 2: (m.w, m.h), 3: (m.w, m.h, m.c), 4: (m.w, m.h, m.d, m.c)}
    return by_dims.get(m.dims)


def params(tmp_path: Path) -> list[Path]:
    real = shared_models("real", "squeezenet_v1.1.param", "nanodet_m.param", "mnet.25-opt.param")
    mnist = shared_models("mnist", *MNIST_FILES)
    # A param with shape hints (-23330: dims, w, h, c of each top blob), as ncnn's tools write them.
    hinted = tmp_path / "hinted.param"
    hinted.write_text("7767517\n3 3\nInput data 0 1 data -23330=4,3,8,8,2 0=8 1=8 2=2\n"
                      "ReLU relu 1 1 data r -23330=4,3,8,8,2\nFlatten flat 1 1 r out -23330=4,1,128,1,1\n")
    return [mnist / "mnist.param", real / "squeezenet_v1.1.param", real / "nanodet_m.param",
            real / "mnet.25-opt.param", hinted]


def test_layers_and_blobs_as_the_wheel(micropython: MicroPython, tmp_path: Path) -> None:
    for param in params(tmp_path):
        script = tmp_path / "graph.py"
        script.write_text(SCRIPT.format(path=str(param)))
        r = micropython.run(script)
        assert r.returncode == 0, r.explain()
        empty, layers, blobs = (ast.literal_eval(line) for line in r.stdout.splitlines())
        assert empty == ([], []), empty
        want_layers, want_blobs = wheel_graph(param)
        assert layers == want_layers, param
        assert blobs == want_blobs, param
        if param.name == "hinted.param":
            assert [b[3] for b in blobs] == [(8, 8, 2), (8, 8, 2), (128,)], blobs

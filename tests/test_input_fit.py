# SPDX-License-Identifier: MIT
"""The shape guard on the team's real models: the mistakes a user makes with a photo (the
wrong size for a net that fixes it, HWC given as CHW, a size a detector's strides cannot
line up) end in a ValueError naming the layer where it shows, natively and under valgrind
with no report (before the guard: reads past the weights, numbers from uninitialised
memory); sizes the models take run as before and the Net works on after a refusal."""

from __future__ import annotations

import pytest

from conftest import MicroPython, shared_models

SCRIPT = """
import ncnn_mp
net = ncnn_mp.Net()
net.opt.num_threads = 1
net.load_param(%(param)r)
net.load_model(%(model)r)

def run(shape):
    x = ncnn_mp.Mat(*shape)
    x.fill(0.25)
    with net.create_extractor() as ex:
        ex.input(%(input)r, x)
        try:
            out = ex.extract(%(output)r)
            print(shape, "->", out.w, out.h, out.c)
        except ValueError as e:
            print(shape, "->", e)

for shape in %(shapes)r:
    run(shape)
"""

# (model family, param, weights, input, output, [(shape, expected line after "shape -> ")])
CASES = {
    "mnist": ("mnist", "mnist.param", "mnist.bin", "data", "fc", [
        ((28, 28, 1), "10 1 1"),
        ((56, 56, 1), "Extractor.extract: the input does not fit the model: layer 'fc' (InnerProduct) "
                      "takes 256 values, its input has 1296 (w=9 h=9 c=16)"),
        ((28, 28, 3), "Extractor.extract: the input does not fit the model: layer 'conv0' (Convolution) "
                      "takes 1 input channel(s), its input has 3 (w=28 h=28 c=3)"),
        ((784,), "Extractor.extract: the input does not fit the model: layer 'conv0' (Convolution) "
                 "takes an image (dims 2 or 3), its input has dims 1 (w=784)"),
        ((28, 28), "10 1 1"),  # a 2-D Mat is one channel
    ]),
    "squeezenet": ("real", "squeezenet_v1.1.param", "squeezenet_v1.1.bin", "data", "prob", [
        ((227, 227, 3), "1000 1 1"),
        ((3, 227, 227), "Extractor.extract: the input does not fit the model: layer 'conv1' (Convolution) "
                        "takes 3 input channel(s), its input has 227 (w=3 h=227 c=227)"),
        ((227, 227, 4), "Extractor.extract: the input does not fit the model: layer 'conv1' (Convolution) "
                        "takes 3 input channel(s), its input has 4 (w=227 h=227 c=4)"),
        ((100, 80, 3), "1000 1 1"),  # global pooling: any size
        ((227, 227, 3), "1000 1 1"),
    ]),
    "nanodet": ("real", "nanodet_m.param", "nanodet_m.bin", "input.1", "792", [
        ((320, 320, 3), "80 1600 1"),
        ((300, 300, 3), "Extractor.extract: the input does not fit the model: layer 'Add_278' (BinaryOp) takes "
                        "inputs that broadcast (each extent equal, or 1 in one): input 1 is w=20 h=20 c=96, "
                        "input 0 is w=19 h=19 c=96"),
        ((320, 320, 3), "80 1600 1"),
    ]),
    "retinaface": ("real", "mnet.25-opt.param", "mnet.25-opt.bin", "data", "face_rpn_cls_prob_reshape_stride8", [
        ((640, 480, 3), "80 60 4"),
        ((641, 479, 3), "81 60 4"),  # its param crops the upsampled features: any size
    ]),
}


def script(case: str) -> tuple[str, list[str]]:
    sub, param, model, inp, out, shapes = CASES[case]
    folder = shared_models(sub, param, model)
    source = SCRIPT % {"param": str(folder / param), "model": str(folder / model), "input": inp, "output": out,
                       "shapes": [s for s, _ in shapes]}
    return source, [f"{s} -> {line}" for s, line in shapes]


@pytest.mark.parametrize("case", sorted(CASES))
def test_real_model_inputs(micropython: MicroPython, case: str) -> None:
    source, want = script(case)
    r = micropython.run_source(source, timeout=120)
    assert r.returncode == 0 and r.stdout.splitlines() == want, r.explain()


@pytest.mark.parametrize("case", sorted(CASES))
def test_real_model_inputs_under_valgrind(micropython_memcheck: MicroPython, case: str) -> None:
    source, want = script(case)
    r = micropython_memcheck.run_source(source, timeout=900)
    assert r.returncode == 0 and r.stdout.splitlines() == want, r.explain()

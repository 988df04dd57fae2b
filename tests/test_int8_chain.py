# SPDX-License-Identifier: MIT
"""int8 between layers (quantize_int8.py --chain; docs/models.md "int8 between layers"), on the
desktop firmware with ncnn_mp's kernels (profile memcheck, run natively here; the MCU suite
runs the same models on the boards):

- which blobs the quantizer keeps int8 (chains());
- a firmware without the kernels refuses a chained model at load, naming the layer;
- accuracy against the fp32 model and against int8 with float between layers, in the CPython
  wheel: MNIST's ten digits and 1,000 variants (top-1 agreement); RetinaFace and NanoDet-m on
  scikit-image photos (the same detections: IoU >= 0.9, scores within 0.05).
The numbers are printed (pytest -s) for docs/models.md.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from ncnn_mp_lib import nanodet, retinaface
from conftest import REPO, MicroPython
from ncnn_mp_tools import quantize_int8 as qz
from real_models import (SIZE, NANODET_SIDE, mnist_digits, mnist_int8, nanodet_input, nanodet_int8,
                         nanodet_int8_outputs, nanodet_model, photo_input, retinaface_models, shared_models)
from test_mcu_models import (CHAIN_IOU, CHAIN_SCORE, close_to, faces, kernels_batch, kernels_outputs,
                             objects, wheel_outputs)

F32 = npt.NDArray[np.float32]

GRAPH = """7767517
13 14
Input           in   0 1 data
Convolution     c0   1 1 data a 0=4 1=1 6=4
Split           sp   1 2 a a1 a2
Convolution     c1   1 1 a1 b 0=4 1=1 6=16
Convolution     c2   1 1 a2 b2 0=4 1=1 6=16
Concat          k    2 1 b b2 cat
ReLU            r    1 1 cat catr
Pooling         p    1 1 catr pl 0=0 1=2 2=2
Convolution     c3   1 1 pl d 0=4 1=1 6=32
Interp          i    1 1 d e 0=1
Convolution     c4   1 1 e f 0=4 1=1 6=16
Pooling         pa   1 1 f g 0=1 1=2 2=2
InnerProduct    fc   1 1 g out 0=2 2=8
"""


def test_chains_found() -> None:
    """Groups joined by Split, Concat, ReLU, max and average Pooling and Interp, written by int8
    convolutions and read only by int8 layers; not one read by an adaptive Pooling, not the input,
    not an InnerProduct's output, not an output of the network."""
    layers, blobs = qz.parse_param(GRAPH)
    model = qz.Model(layers, blobs)
    chosen = ["c0", "c1", "c2", "c3", "c4", "fc"]
    found = {(tuple(sorted(g.blobs)), tuple(g.producers), tuple(g.consumers)) for g in qz.chains(model, chosen)}
    assert found == {(("a", "a1", "a2"), ("c0",), ("c1", "c2")),
                     (("b", "b2", "cat", "catr", "pl"), ("c1", "c2"), ("c3",)),
                     (("d", "e"), ("c3",), ("c4",)), (("f", "g"), ("c4",), ("fc",))}
    adaptive = qz.Model(qz.parse_param(GRAPH.replace("0=1 1=2 2=2", "0=1 7=1 8=2 18=2"))[0], blobs)
    assert {tuple(g.producers) for g in qz.chains(adaptive, chosen)} == {("c0",), ("c1", "c2"), ("c3",)}
    # an Interp with a dynamic size (a second bottom) passes nothing
    dynamic = qz.Model(qz.parse_param(GRAPH.replace("Interp          i    1 1 d e 0=1",
                                                    "Interp          i    2 1 d a2 e 0=1 5=1"))[0], blobs)
    assert (("d", "e"), ("c3",), ("c4",)) not in {
        (tuple(sorted(g.blobs)), tuple(g.producers), tuple(g.consumers)) for g in qz.chains(dynamic, chosen)}
    # a layer left fp32 (--skip) breaks its chains
    found = {tuple(g.producers) for g in qz.chains(model, ["c0", "c1", "c2", "c4", "fc"])}
    assert found == {("c0",), ("c4",)}
    # a leaky ReLU between them is no pass-through
    leaky = qz.Model(qz.parse_param(GRAPH.replace("ReLU            r    1 1 cat catr",
                                                  "ReLU            r    1 1 cat catr 0=0.1"))[0], blobs)
    assert {tuple(g.producers) for g in qz.chains(leaky, chosen)} == {("c0",), ("c3",), ("c4",)}


OPS = """7767517
7 7
Input           in   0 1 x
Convolution     c0   1 1 x a 0=4 1=1 6=12
Convolution     c1   1 1 a b 0=4 1=1 6=16
BinaryOp        add  2 1 a1 b s 0=0
Convolution     c2   1 1 s t 0=4 1=1 6=16
Pooling         pa   1 1 t u 0=1 1=2 2=2
InnerProduct    fc   1 1 u out 0=2 2=8
"""


def test_int8_binaryop_chains() -> None:
    """A BinaryOp add or mul of two int8 groups into one read by int8 layers is int8 itself
    (producer and consumer); with a scalar, or read by a float layer, it is not, and the
    groups it joined go float with it where nothing else keeps them int8."""
    text = OPS.replace("Convolution     c0   1 1 x a 0=4 1=1 6=12",
                       "Convolution     c0   1 1 x a0 0=4 1=1 6=12\nSplit sp 1 2 a0 a a1").replace("7 7", "8 9")
    model = qz.Model(*qz.parse_param(text))
    chosen = ["c0", "c1", "c2", "fc"]
    found = {(tuple(sorted(g.blobs)), tuple(g.producers), tuple(g.consumers)) for g in qz.chains(model, chosen)}
    assert found == {(("a", "a0", "a1"), ("c0",), ("c1", "add")), (("b",), ("c1",), ("add",)),
                     (("s",), ("add",), ("c2",)), (("t", "u"), ("c2",), ("fc",))}
    mul = qz.Model(*qz.parse_param(text.replace("s 0=0", "s 0=2")))
    assert len(qz.chains(mul, chosen)) == 4
    for other in ("s 0=0 1=1 2=2.0", "s 0=1"):  # (a scalar; sub)
        m = qz.Model(*qz.parse_param(text.replace("s 0=0", other)))
        # (a, which it reads too, goes float with it; c2's output on through the average Pooling stays)
        assert {tuple(g.producers) for g in qz.chains(m, chosen)} == {("c2",)}, other
    # the sum read by an adaptive Pooling: the BinaryOp is not int8, nor are its inputs' groups
    # but for what the convolutions read
    floaty = qz.Model(*qz.parse_param(text.replace("Convolution     c2   1 1 s t", "Pooling c2 1 1 s t 0=1 7=1 8=1 18=1")))
    assert {tuple(g.producers) for g in qz.chains(floaty, ["c0", "c1", "fc"])} == set()
    # the BinaryOp dropped, the rest found again (the layers given as a generator, as quantize_files does)
    dropped = qz.Model(*qz.parse_param("""7767517
8 10
Input           in   0 1 x
Convolution     c0   1 1 x a 0=4 1=1 6=12
Convolution     c1   1 1 a b 0=4 1=1 6=16
Split           sp   1 2 b b1 b2
Convolution     c2   1 1 b1 c 0=4 1=1 6=16
BinaryOp        add  2 1 c b2 s 0=0
Pooling         pa   1 1 s u 0=1 7=1 8=1 18=1
InnerProduct    fc   1 1 u out 0=2 2=4
"""))
    assert {tuple(g.producers) for g in qz.chains(dropped, (n for n in ["c0", "c1", "c2", "fc"]))} == {("c0",)}


RESIDUAL = """7767517
7 9
Input           in   0 1 x
Convolution     c0   1 1 x a0 0=4 1=1 6=12
Split           sp   1 2 a0 a a1
Convolution     c1   1 1 a b 0=4 1=1 6=16 9=1
Eltwise         add  2 1 b a1 s 0=1
Convolution     c2   1 1 s t 0=4 1=1 6=16
Pooling         pa   1 1 t out 0=1 4=1
"""


def test_eltwise_joins_the_chain(tmp_path: Path) -> None:
    """A residual join written as Eltwise (darknet's and Caffe's converters write it): a plain sum
    or product of two inputs becomes the BinaryOp that computes the same, bit for bit in fp32 (in
    the wheel), and then chains as an int8 BinaryOp does; one with other coefficients, or three
    inputs, stays an Eltwise and leaves the chain there."""
    model = qz.Model(*qz.parse_param(RESIDUAL))
    chosen = ["c0", "c1", "c2"]
    assert qz.chains(model, chosen) == []  # (a float Eltwise reads both groups)
    for params, op in (("0=1", "0"), ("0=1 -23301=2,1.0,1.000000e+00", "0"), ("0=0", "2")):
        moved = qz.eltwise_as_binaryop(qz.Model(*qz.parse_param(RESIDUAL.replace("0=1\n", params + "\n"))))
        add = moved.layer("add")
        assert (add.type, add.params, add.bottoms, add.tops) == ("BinaryOp", [("0", op)], ["b", "a1"], ["s"])
        assert {tuple(g.producers) for g in qz.chains(moved, chosen)} == {("c0",), ("c1",), ("add",)}
    for params in ("0=1 -23301=2,1.0,0.5", "0=2"):  # (weighted sum; max)
        kept = qz.eltwise_as_binaryop(qz.Model(*qz.parse_param(RESIDUAL.replace("0=1\n", params + "\n"))))
        assert kept.layer("add").type == "Eltwise" and qz.chains(kept, chosen) == [], params
    three = RESIDUAL.replace("Split           sp   1 2 a0 a a1", "Split sp 1 3 a0 a a1 a2") \
        .replace("Eltwise         add  2 1 b a1 s", "Eltwise add 3 1 b a1 a2 s").replace("7 9", "7 10")
    assert qz.eltwise_as_binaryop(qz.Model(*qz.parse_param(three))).layer("add").type == "Eltwise"
    # fp32, in the wheel: the same outputs bit for bit
    rng = np.random.default_rng(3)
    fp32 = qz.Model(*qz.parse_param(RESIDUAL))
    for layer in fp32.layers:
        for role, type_, count in (qz.LAYOUTS[layer.type](layer) if layer.type in qz.LAYOUTS else []):
            layer.loads.append(qz.Load(role, type_, rng.normal(0, 1, count).astype(np.float32)))
    qz.write_model(fp32, tmp_path / "e.param", tmp_path / "e.bin")
    qz.write_model(qz.eltwise_as_binaryop(fp32), tmp_path / "b.param", tmp_path / "b.bin")
    assert "BinaryOp" in (tmp_path / "b.param").read_text()
    x = rng.normal(0, 1, (3, 7, 5)).astype(np.float32)
    want = wheel_outputs(tmp_path / "e.param", tmp_path / "e.bin", "x", ["s", "out"], x)
    got = wheel_outputs(tmp_path / "b.param", tmp_path / "b.bin", "x", ["s", "out"], x)
    for name in ("s", "out"):
        assert np.array_equal(got[name], want[name]), name


def test_chained_model_refused_without_kernels(micropython: MicroPython, tmp_path: Path) -> None:
    """The plain unix firmware keeps ncnn's x86 layers, which read int8 as floats: the chained
    MNIST (int8 through Pooling) fails at load_param with the layer and blob named; the
    firmware with the kernels loads it."""
    param, weights = mnist_int8(tmp_path, chain=True)
    source = f"""
import ncnn_mp
net = ncnn_mp.Net()
try:
    net.load_param({str(param)!r})
    net.load_model({str(weights)!r})
    print("loaded")
except ValueError as e:
    print(e)
"""
    out = micropython.check(source)
    kernels = micropython.check("import ncnn_mp; print(ncnn_mp.build_info().get('NCNN_MP_KERNELS'))").strip()
    if kernels == "True":
        assert out.strip() == "loaded", out
    else:
        assert "layer 'pool0' (Pooling) cannot read the int8 blob 'conv0'" in out, out


def digit_variants(n: int, seed: int = 5) -> list[F32]:
    """n MNIST-like inputs from the ten digits: shifted up to 3 pixels, contrast 0.6..1,
    Gaussian noise 0..0.15, clipped to [0, 1]."""
    rng = np.random.default_rng(seed)
    digits = mnist_digits()
    out = []
    for i in range(n):
        d = digits[i % 10][0]
        d = np.roll(d, (int(rng.integers(-3, 4)), int(rng.integers(-3, 4))), axis=(0, 1))
        d = d * rng.uniform(0.6, 1.0) + rng.normal(0, rng.uniform(0, 0.15), d.shape)
        out.append(np.clip(d, 0, 1).astype(np.float32).reshape(1, 28, 28))
    return out


def test_mnist_agreement(tmp_path: Path) -> None:
    mnist = shared_models("mnist", "mnist.param", "mnist.bin")
    fp32 = (mnist / "mnist.param", mnist / "mnist.bin")
    int8 = mnist_int8(tmp_path)
    chain = mnist_int8(tmp_path, chain=True)
    inputs = mnist_digits() + digit_variants(1000)
    x = np.concatenate([i.reshape(1, 1, 28, 28) for i in inputs])  # (N, 1, 28, 28)
    top = {"fp32": [], "int8": []}
    for name, files in (("fp32", fp32), ("int8", int8)):
        top[name] = [int(wheel_outputs(*files, "data", ["fc"], i)["fc"].argmax()) for i in inputs]
    top["chain"] = [int(o["fc"].argmax()) for o in kernels_batch(*chain, "data", ["fc"], x)]
    assert top["chain"][:10] == list(range(10)), top["chain"][:10]
    vs_fp32 = np.mean(np.array(top["chain"]) == np.array(top["fp32"]))
    vs_int8 = np.mean(np.array(top["chain"]) == np.array(top["int8"]))
    int8_vs_fp32 = np.mean(np.array(top["int8"]) == np.array(top["fp32"]))
    print(f"MNIST, 10 digits + 1,000 variants: int8 chain top-1 = fp32's {vs_fp32:.1%}, = int8's {vs_int8:.1%}; "
          f"(int8 = fp32's {int8_vs_fp32:.1%})")
    assert vs_fp32 >= 0.97 and vs_int8 >= 0.97


def test_retinaface_agreement(tmp_path: Path) -> None:
    """The astronaut (calibration: chelsea, coffee, rocket, camera): int8 chain against fp32."""
    import skimage.data

    models = retinaface_models(tmp_path)
    names = [n for s in retinaface.STRIDES for n in retinaface.output_names(s)]
    x = photo_input(skimage.data.astronaut(), SIZE)
    want = faces(wheel_outputs(*models["fp32"], "data", names, x))
    int8 = faces(wheel_outputs(*models["int8"], "data", names, x))
    got = faces(kernels_outputs(*models["int8c"], "data", names, x))
    print(f"RetinaFace, astronaut at {SIZE}x{SIZE}: fp32 {want}; int8 {int8}; int8 chain {got}")
    assert want
    close_to(got, want, CHAIN_IOU, CHAIN_SCORE, "int8 chain against fp32")


HEAD = """7767517
9 10
Input           in   0 1 x
Convolution     c0   1 1 x a 0=6 1=1 6=18
Slice           sl   1 2 a cls dis -23300=2,4,-233
Sigmoid         sg   1 1 cls p
Reshape         r0   1 1 p pr 0=-1 1=4
Permute         t0   1 1 pr score 0=1
Reshape         r1   1 1 dis dr 0=-1 1=2
Permute         t1   1 1 dr box 0=1
Noop            n    1 1 box unused
"""


def test_head_chains() -> None:
    """A detector's head (a convolution, Slice, Sigmoid then Reshape and Permute to the class
    scores, Reshape and Permute to the box logits): sink_tables moves the Sigmoid after the
    Reshape and Permute, keeping the output's name; the chain then runs from the convolution
    to the Sigmoid's table and to the Permute ending at an output (floats q / scale, param 20),
    or with int8 outputs through both to the outputs."""
    layers, blobs = qz.parse_param(HEAD.replace("Noop            n    1 1 box unused\n", "").replace("9 10", "8 9"))
    model = qz.sink_tables(qz.Model(layers, blobs))
    lines = {layer.name: (layer.type, layer.bottoms, layer.tops) for layer in model.layers}
    assert [layer.name for layer in model.layers] == ["in", "c0", "sl", "r0", "t0", "sg", "r1", "t1"]
    assert lines["r0"] == ("Reshape", ["cls"], ["pr_q"]) and lines["t0"] == ("Permute", ["pr_q"], ["score_q"])
    assert lines["sg"] == ("Sigmoid", ["score_q"], ["score"])
    (g,) = qz.chains(model, ["c0"])
    assert (sorted(g.blobs), g.producers, sorted(g.consumers)) == (
        ["a", "cls", "dis", "dr", "pr_q", "score_q"], ["c0"], ["sg", "t1"])
    (g,) = qz.chains(model, ["c0"], int8_outputs=True)
    assert (sorted(g.blobs), g.producers, g.consumers) == (
        ["a", "box", "cls", "dis", "dr", "pr_q", "score_q"], ["c0"], ["sg"])
    # a Sigmoid whose output a Split hands on too stays where it is, the float side its own
    layers, blobs = qz.parse_param(HEAD.replace("Reshape         r0   1 1 p pr", "Split sp2 1 2 p p1 p2\nReshape r0 1 1 p1 pr")
                                   .replace("Noop            n    1 1 box unused\n", "").replace("9 10", "9 11"))
    kept = qz.sink_tables(qz.Model(layers, blobs))
    assert [layer.name for layer in kept.layers] == [layer.name for layer in layers]
    (g,) = qz.chains(kept, ["c0"], int8_outputs=True)
    assert (sorted(g.blobs), g.consumers) == (["a", "box", "cls", "dis", "dr"], ["sg"])
    # an output that no Reshape or Permute writes (a Noop's after the Permute): no chain reaches it
    assert not qz.chains(qz.Model(*qz.parse_param(HEAD)), ["c0"], int8_outputs=True)


def test_sink_tables_exact(tmp_path: Path) -> None:
    """NanoDet-m with its Sigmoids moved (fp32, in the wheel) gives every output bit for bit."""
    import skimage.data

    fp32 = nanodet_model(tmp_path)
    model = qz.read_model(*fp32)
    moved = qz.sink_tables(model)
    assert [layer.name for layer in moved.layers] != [layer.name for layer in model.layers]
    qz.write_model(moved, tmp_path / "moved.param", tmp_path / "moved.bin")
    x = nanodet_input(skimage.data.coffee(), 96)
    outputs = [name for s in nanodet.STRIDES for name in nanodet.OUTPUTS[s]]
    want = wheel_outputs(*fp32, nanodet.INPUT, outputs, x)
    got = wheel_outputs(tmp_path / "moved.param", tmp_path / "moved.bin", nanodet.INPUT, outputs, x)
    for name in outputs:
        assert np.array_equal(got[name], want[name]), name


@pytest.mark.parametrize("photo", ["coffee", "stereo_motorcycle", "chelsea", "astronaut"])
def test_nanodet_agreement(tmp_path: Path, photo: str) -> None:
    """NanoDet-m (calibration: chelsea, astronaut, rocket, camera): int8 and int8 chain against
    fp32, on photos outside the calibration set and in it."""
    import skimage.data

    image = getattr(skimage.data, photo)()
    image = image[0] if isinstance(image, tuple) else image  # (stereo_motorcycle: left, right, disparity)
    fp32 = nanodet_model(tmp_path)
    models = nanodet_int8(tmp_path, fp32)
    x = nanodet_input(image, NANODET_SIDE)
    c, h, w = x.shape
    outputs = [name for s in nanodet.STRIDES for name in nanodet.OUTPUTS[s]]

    want = objects(wheel_outputs(*fp32, nanodet.INPUT, outputs, x), w)
    int8 = objects(kernels_outputs(*models["int8"], nanodet.INPUT, outputs, x), w)
    chain = objects(kernels_outputs(*models["int8c"], nanodet.INPUT, outputs, x), w)
    # (int8 outputs: the kernels' run reads them as q / scale, as a board's decoder does)
    int8o = objects(kernels_outputs(*nanodet_int8_outputs(tmp_path, fp32), nanodet.INPUT, outputs, x), w)
    print(f"NanoDet-m, {photo}: fp32 {want}; int8 {int8}; int8 chain {chain}; int8 outputs {int8o}")
    close_to(int8, want, CHAIN_IOU, CHAIN_SCORE, "int8 against fp32")
    close_to(chain, want, CHAIN_IOU, CHAIN_SCORE, "int8 chain against fp32")
    close_to(int8o, want, CHAIN_IOU, CHAIN_SCORE, "int8 outputs against fp32")


def variants(param: Path, seed: int, n: int) -> list[str]:
    """n variants of an int8 model's param: each changes the int8 scale terms (8=) of a few
    int8 layers (the .bin then holds more or fewer scales than the param reads), or turns a
    layer between two int8 layers into one that cannot read int8."""
    rng = np.random.default_rng(seed)
    lines = param.read_text().splitlines()
    int8_at = [i for i, line in enumerate(lines) if " 8=" in line]
    other_at = [i for i, line in enumerate(lines[2:], 2) if line.split()[0] in ("Split", "Concat", "ReLU", "Pooling",
                                                                                 "Slice", "ShuffleChannel")]
    out = []
    for _ in range(n):
        v = list(lines)
        swap = bool(other_at) and rng.random() < 0.6
        for i in rng.choice(int8_at, size=min(len(int8_at), int(rng.integers(1, 4))), replace=False):
            if swap and rng.random() < 0.5:
                break  # (a layer swapped alone: the weights still fit, the model runs or is refused)
            term = str(rng.choice([0, 1, 2, 101, 102, 103, 200, -1]))
            v[i] = " ".join(t if not t.startswith("8=") else "8=" + term for t in v[i].split())
        if swap:
            i = int(rng.choice(other_at))
            parts = v[i].split()
            kind = str(rng.choice(["ReLU", "Sigmoid", "Softmax", "Pooling"]))
            extra = {"ReLU": " 0=0.1", "Pooling": " 0=1 1=2 2=2"}.get(kind, "")
            if int(parts[2]) == 1 and int(parts[3]) == 1:  # (a layer of one input and one output only)
                v[i] = " ".join([kind, parts[1], "1 1", parts[4], parts[5]]) + extra
        out.append("\n".join(v) + "\n")
    return out


@pytest.mark.parametrize("under_valgrind", [False, True])
def test_int8_terms_fuzzed(tmp_path: Path, under_valgrind: bool) -> None:
    """Chained MNIST and RetinaFace with their int8 terms changed and pass-through layers
    swapped, over their own weights, on the firmware with the kernels (natively: 120 variants
    each; under valgrind: 8): each runs or raises, nothing crashes, valgrind reports nothing."""
    import subprocess

    from conftest import NO_ASLR, VALGRIND, _firmware, _script_env

    env = dict(_script_env(), NCNN_MP_UNDER_VALGRIND="1") if under_valgrind else _script_env()
    (tmp_path / "r").mkdir()
    retina = retinaface_models(tmp_path / "r")  # (its own folder: both write int8c.param)
    models = [(mnist_int8(tmp_path, chain=True), "data", (28, 28, 1), ["fc"]),
              (retina["int8c"], "data", (64, 64, 3), [n for s in retinaface.STRIDES for n in retinaface.output_names(s)])]
    n = 8 if under_valgrind else 120
    for k, ((param, weights), in_name, (w, h, c), outs) in enumerate(models):
        path = tmp_path / f"variants{k}.txt"
        path.write_text("\n---\n".join(variants(param, 100 + k, n)))
        cmd = NO_ASLR + (VALGRIND if under_valgrind else []) + [str(_firmware("memcheck")),
                                                                str(REPO / "tests" / "mp_int8_variants.py"),
                                                                str(path), str(weights), in_name, str(w), str(h),
                                                                str(c), *outs]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
        assert r.returncode == 0 and r.stdout.strip().endswith("done"), r.stdout[-2000:] + r.stderr[-4000:]
        print(param.name, r.stdout.splitlines()[0])

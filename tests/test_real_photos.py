# SPDX-License-Identifier: MIT
"""Real photos through real models on the Unix firmware, against the CPython wheel on the
same photo: SqueezeNet v1.1 (examples/squeezenet_classify.py) on scikit-image's photos, the
top 5 with labels, probabilities within 1e-4 of the wheel's and as ../shared/models/real's
README states them."""

from __future__ import annotations

import ast
from pathlib import Path

import ncnn
import numpy as np
import numpy.typing as npt
import pytest

from conftest import REPO, MicroPython, shared_models

REAL = ("squeezenet_v1.1.param", "squeezenet_v1.1.bin", "synset_words.txt")
# ../shared/models/real/README.md: the wheel's top 3 on these photos.
README_TOP3 = {"chelsea": [(285, 0.4512), (282, 0.2916), (281, 0.2110)],
               "coffee": [(967, 0.9793), (968, 0.0027), (925, 0.0013)]}


def write_ppm(path: Path, rgb: npt.NDArray[np.uint8]) -> None:
    h, w = rgb.shape[:2]  # with a comment line, as image tools write them
    path.write_bytes(b"P6\n# a scikit-image photo\n%d %d\n255\n" % (w, h) + np.ascontiguousarray(rgb).tobytes())


def wheel_probs(real: Path, rgb: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    net = ncnn.Net()
    net.opt.num_threads = 1
    assert net.load_param(str(real / REAL[0])) == 0 and net.load_model(str(real / REAL[1])) == 0
    h, w = rgb.shape[:2]
    x = ncnn.Mat.from_pixels_resize(np.ascontiguousarray(rgb), ncnn.Mat.PixelType.PIXEL_RGB2BGR, w, h, 227, 227)
    x.substract_mean_normalize([104.0, 117.0, 123.0], [])
    ex = net.create_extractor()
    ex.input("data", x)
    ret, prob = ex.extract("prob")
    assert ret == 0
    return np.array(prob, dtype=np.float32).reshape(-1)


@pytest.mark.parametrize("photo", sorted(README_TOP3))
def test_squeezenet_classifies_photos(micropython: MicroPython, tmp_path: Path, photo: str) -> None:
    import skimage.data

    real = shared_models("real", *REAL)
    rgb = getattr(skimage.data, photo)()
    write_ppm(tmp_path / f"{photo}.ppm", rgb)
    r = micropython.run(REPO / "examples" / "squeezenet_classify.py", str(tmp_path / f"{photo}.ppm"), str(real))
    assert r.returncode == 0, r.explain()
    rows = [line.split(" ", 2) for line in r.stdout.splitlines()]
    got = [(int(i), float(p), label) for i, p, label in rows]
    want = wheel_probs(real, rgb)
    assert [i for i, _, _ in got] == list(np.argsort(-want)[:5]), (got, want[np.argsort(-want)[:5]])
    for i, p, label in got:
        assert abs(p - float(want[i])) <= 1e-4, (i, p, float(want[i]))
    labels = [line.split(" ", 1)[1].strip() for line in (real / REAL[2]).read_text().splitlines()]
    assert [label for _, _, label in got] == [labels[i] for i, _, _ in got]
    assert [(i, round(p, 4)) for i, p, _ in got[:3]] == README_TOP3[photo]


MNET = ("mnet.25-opt.param", "mnet.25-opt.bin")
SIDE = 320


def numpy_faces(outs: dict[str, npt.NDArray[np.float32]], side: int, threshold: float = 0.8,
                nms: float = 0.4) -> list[tuple[float, float, float, float, float]]:
    """A reference decoder written apart from ncnn_mp_lib/retinaface.py, array at a time:
    (score, x0, y0, x1, y1) in the network input's pixels, best first, after NMS."""
    found = []
    for stride, sizes in ((32, (512.0, 256.0)), (16, (128.0, 64.0)), (8, (32.0, 16.0))):
        n = side // stride
        cls = outs[f"face_rpn_cls_prob_reshape_stride{stride}"].reshape(4, n, n)
        bbox = outs[f"face_rpn_bbox_pred_stride{stride}"].reshape(2, 4, n, n)
        ys, xs = np.mgrid[0:n, 0:n]
        cx, cy = xs * stride + 8.0, ys * stride + 8.0
        for a, size in enumerate(sizes):
            score = cls[2 + a]
            px, py = cx + size * bbox[a, 0], cy + size * bbox[a, 1]
            pw, ph = size * np.exp(bbox[a, 2]), size * np.exp(bbox[a, 3])
            keep = score >= threshold
            found += list(zip(score[keep], (px - pw / 2)[keep], (py - ph / 2)[keep], (px + pw / 2)[keep],
                              (py + ph / 2)[keep]))
    boxes = np.array(sorted(found, key=lambda f: -f[0]), dtype=np.float64).reshape(-1, 5)
    kept: list[tuple[float, float, float, float, float]] = []
    for b in boxes:
        k = np.array(kept).reshape(-1, 5)
        inter = (np.clip(np.minimum(b[3], k[:, 3]) - np.maximum(b[1], k[:, 1]), 0, None)
                 * np.clip(np.minimum(b[4], k[:, 4]) - np.maximum(b[2], k[:, 2]), 0, None))
        union = (b[3] - b[1]) * (b[4] - b[2]) + (k[:, 3] - k[:, 1]) * (k[:, 4] - k[:, 2]) - inter
        if not np.any(inter / union > nms):
            kept.append(tuple(float(v) for v in b))  # type: ignore[arg-type]
    return kept


def test_retinaface_finds_the_astronauts_face(micropython: MicroPython, tmp_path: Path) -> None:
    """examples/retinaface_detect.py on the Unix firmware: the same faces as the wheel's outputs
    decoded by ncnn_mp_lib/retinaface.py under CPython, and by the numpy reference decoder."""
    import skimage.data

    from ncnn_mp_lib import detection, retinaface

    real = shared_models("real", *MNET)
    rgb = skimage.data.astronaut()
    h, w = rgb.shape[:2]
    write_ppm(tmp_path / "astronaut.ppm", rgb)
    r = micropython.run(REPO / "examples" / "retinaface_detect.py", str(tmp_path / "astronaut.ppm"), str(real),
                        str(SIDE), str(tmp_path / "faces.png"), cwd=REPO / "examples", heapsize="16M")
    assert r.returncode == 0, r.explain()
    got = [[float(v) for v in line.split()[1:2] + line.split()[3:7]] for line in r.stdout.splitlines()]
    # The picture: the photo, the box drawn in green on its edge, a landmark in red.
    from PIL import Image

    drawn = np.array(Image.open(tmp_path / "faces.png"))
    assert drawn.shape == rgb.shape
    x0, y0 = int(got[0][1]), int(got[0][2])
    assert list(drawn[y0 + 1, x0 + 20]) == [0, 255, 0], drawn[y0 + 1, x0 + 20]
    lx, ly = (float(v) for v in r.stdout.split("landmarks ")[1].split()[0].split(","))
    assert list(drawn[int(ly), int(lx)]) == [255, 0, 0]
    assert np.array_equal(drawn[:y0 - 5], rgb[:y0 - 5])  # nothing else changed above the box
    net = ncnn.Net()
    net.opt.num_threads = 1
    assert net.load_param(str(real / MNET[0])) == 0 and net.load_model(str(real / MNET[1])) == 0
    x = ncnn.Mat.from_pixels_resize(np.ascontiguousarray(rgb), ncnn.Mat.PixelType.PIXEL_RGB, w, h, SIDE, SIDE)
    ex = net.create_extractor()
    ex.input("data", x)
    outs = {}
    for stride in retinaface.STRIDES:
        for name in retinaface.output_names(stride):
            ret, m = ex.extract(name)
            assert ret == 0
            outs[name] = np.array(m, dtype=np.float32).reshape(-1)
    by_stride = {s: (SIDE // s, SIDE // s, (SIDE // s) ** 2, *(outs[n].tolist() for n in retinaface.output_names(s)))
                 for s in retinaface.STRIDES}
    sx, sy = w / SIDE, h / SIDE
    scale = np.array([1, sx, sy, sx, sy])
    wheel = [list(np.array(f[:5]) * scale) for f in retinaface.detect(by_stride)]  # type: ignore[arg-type]
    reference = [list(np.array(f) * scale) for f in numpy_faces(outs, SIDE)]
    assert len(reference) == 1, reference  # one face in the photo
    for want in (wheel, reference):
        assert len(got) == len(want), (got, want)
        for g, f in zip(got, want):
            assert abs(g[0] - f[0]) <= 1e-3, (g, f)
            assert detection.box_iou(g[1:5], f[1:5]) >= 0.95, (g, f)


NANODET = ("nanodet_m.param", "nanodet_m.bin")
# scikit-image photos with COCO objects in them: the astronaut (a person), chelsea (a cat),
# coffee (a cup on a dining table); each one's classes as the wheel finds them.
NANODET_PHOTOS = {"astronaut": [0], "chelsea": [15], "coffee": [41, 60]}


def wheel_nanodet(real: Path, rgb: npt.NDArray[np.uint8]) -> tuple[dict[int, tuple[npt.NDArray[np.float32], ...]],
                                                                      tuple[int, int, float, int]]:
    """The wheel's NanoDet outputs {stride: (cls, dis)} on the photo letterboxed as
    examples/nanodet_detect.py does it, and (px, py, scale, input width)."""
    from ncnn_mp_lib import nanodet

    net = ncnn.Net()
    net.opt.num_threads = 1
    assert net.load_param(str(real / NANODET[0])) == 0 and net.load_model(str(real / NANODET[1])) == 0
    h, w = rgb.shape[:2]
    rw, rh, px, py, scale = nanodet.letterbox(w, h)
    x = ncnn.Mat.from_pixels_resize(np.ascontiguousarray(rgb), ncnn.Mat.PixelType.PIXEL_RGB2BGR, w, h, rw, rh)
    pw, ph = (rw + 31) // 32 * 32 - rw, (rh + 31) // 32 * 32 - rh
    x = ncnn.copy_make_border(x, py, ph - py, px, pw - px, ncnn.BorderType.BORDER_CONSTANT, 0.0)
    x.substract_mean_normalize(nanodet.MEAN, nanodet.NORM)
    ex = net.create_extractor()
    ex.input(nanodet.INPUT, x)
    outs = {}
    for stride, names in nanodet.OUTPUTS.items():
        mats = [ex.extract(name) for name in names]
        assert all(ret == 0 for ret, _ in mats)
        outs[stride] = tuple(np.array(m, dtype=np.float32) for _, m in mats)
    return outs, (px, py, scale, x.w)


def numpy_objects(outs: dict[int, tuple[npt.NDArray[np.float32], ...]], input_w: int, threshold: float = 0.4,
                  nms: float = 0.5) -> list[tuple[float, float, float, float, float, int]]:
    """A reference decoder written apart from ncnn_mp_lib/nanodet.py, array at a time:
    (score, x0, y0, x1, y1, class) in the network input's pixels, best first, NMS per class."""
    rows = []
    for stride, (cls, dis) in outs.items():
        score, label = cls.max(axis=1), cls.argmax(axis=1)
        cells = np.nonzero(score >= threshold)[0]
        logits = dis[cells].reshape(-1, 4, 8).astype(np.float64)
        soft = np.exp(logits - logits.max(axis=2, keepdims=True))
        sides = (soft / soft.sum(axis=2, keepdims=True) * np.arange(8)).sum(axis=2) * stride
        cx, cy = (cells % (input_w // stride) + 0.5) * stride, (cells // (input_w // stride) + 0.5) * stride
        boxes = np.stack([cx - sides[:, 0], cy - sides[:, 1], cx + sides[:, 2], cy + sides[:, 3]], axis=1)
        rows += [(float(score[c]), *map(float, b), int(label[c])) for c, b in zip(cells, boxes)]
    kept: list[tuple[float, float, float, float, float, int]] = []
    for r in sorted(rows, key=lambda r: -r[0]):
        same = np.array([k[1:5] for k in kept if k[5] == r[5]]).reshape(-1, 4)
        inter = (np.clip(np.minimum(r[3], same[:, 2]) - np.maximum(r[1], same[:, 0]), 0, None)
                 * np.clip(np.minimum(r[4], same[:, 3]) - np.maximum(r[2], same[:, 1]), 0, None))
        union = (r[3] - r[1]) * (r[4] - r[2]) + (same[:, 2] - same[:, 0]) * (same[:, 3] - same[:, 1]) - inter
        if not np.any(inter / union > nms):
            kept.append(r)  # type: ignore[arg-type]
    return kept


@pytest.mark.parametrize("photo", sorted(NANODET_PHOTOS))
def test_nanodet_finds_objects(micropython: MicroPython, tmp_path: Path, photo: str) -> None:
    """examples/nanodet_detect.py on the Unix firmware: the same objects as the wheel's outputs
    decoded by ncnn_mp_lib/nanodet.py under CPython, and by the numpy reference decoder."""
    import skimage.data

    from ncnn_mp_lib import detection, nanodet

    real = shared_models("real", *NANODET)
    rgb = getattr(skimage.data, photo)()
    h, w = rgb.shape[:2]
    write_ppm(tmp_path / f"{photo}.ppm", rgb)
    picture = tmp_path / "objects.png"
    r = micropython.run(REPO / "examples" / "nanodet_detect.py", str(tmp_path / f"{photo}.ppm"), str(real), "320",
                        str(picture), cwd=REPO / "examples", heapsize="16M")
    assert r.returncode == 0, r.explain()
    got = [(float(f[0]), *map(float, f[2:6]), int(f[7])) for f in (line.split() for line in r.stdout.splitlines())]
    assert [nanodet.LABELS[o[5]] for o in got] == [line.split(" ", 8)[8] for line in r.stdout.splitlines()]
    outs, (px, py, scale, input_w) = wheel_nanodet(real, rgb)
    by_stride = {s: (input_w // s, len(cls), cls.reshape(-1).tolist(), dis.reshape(-1).tolist())
                 for s, (cls, dis) in outs.items()}
    wheel = nanodet.to_photo(nanodet.detect(by_stride), w, h, px, py, scale)  # type: ignore[arg-type]
    reference = nanodet.to_photo(numpy_objects(outs, input_w), w, h, px, py, scale)
    assert sorted({o[5] for o in reference}) == NANODET_PHOTOS[photo], reference
    for want in (wheel, reference):
        assert len(got) == len(want), (got, want)
        for g, o in zip(got, want):
            assert g[5] == o[5], (g, o)
            assert abs(g[0] - o[0]) <= 1e-3, (g, o)
            assert detection.box_iou(g[1:5], o[1:5]) >= 0.95, (g, o)
    # The picture: the photo with each box's edge in its class's colour, and its label.
    from PIL import Image

    drawn = np.array(Image.open(picture))
    assert drawn.shape == rgb.shape
    x0, x1, y1 = int(got[0][1]), int(got[0][3]), min(int(got[0][4]), h - 1)
    edge = drawn[y1, x0 + 3:x1 - 3]  # the best box's bottom edge: one colour of the palette
    assert (edge == edge[0]).all() and set(edge[0]) <= {0, 128, 255} and len(set(edge[0])) > 1, edge[0]
    assert not np.array_equal(drawn, rgb)


# (ncnn_mp_lib: the checkout's root is on MICROPYPATH on Unix, conftest's harness; frozen in on a board)
SCANS = """
import array, random
from ncnn_mp_lib import detection
assert detection.FAST  # the Unix firmware has viper
random.seed(2)
values = (0.0, -0.0, 0.25, 0.5, 0.5000001, 0.75, 1.0, -1.0, 3e-39)  # 3e-39: a subnormal
mismatches = 0
for trial in range(400):
    rows, cols = random.randint(0, 30), random.randint(1, 9)
    step, at = cols + random.randint(0, 3), random.randint(0, 5)
    data = array.array("f", [random.choice(values) if random.random() < 0.5 else random.random()
                             for _ in range(at + rows * step + cols)])
    scores = memoryview(data)
    threshold = random.choice((0.1, 0.5, 0.9, 0.5000001, 3e-39))
    k = random.randint(1, 8)
    mismatches += detection.candidates(scores, at, rows, cols, step, threshold) != \
        detection.candidates(scores, at, rows, cols, step, threshold, fast=False)
    mismatches += detection.top_k(scores, k) != detection.top_k(scores, k, fast=False)
print("mismatches", mismatches)
"""


def test_viper_scans_agree(micropython: MicroPython) -> None:
    """ncnn_mp_lib/detection.py's viper scans give what the plain loops give, on random scores
    with ties, zeros of both signs, negatives and subnormals."""
    assert micropython.check(SCANS).split() == ["mismatches", "0"]


@pytest.mark.mcu
@pytest.mark.parametrize("profile", ["qemu", "rv32"])
def test_viper_scans_agree_on_the_boards(profile: str) -> None:
    """The same on the 32-bit boards (frozen detection.py), where viper's words are signed."""
    from ci.qemu import run_script
    from conftest import QemuBoard

    r = run_script(profile, QemuBoard(profile).binary, SCANS.encode(), timeout=300)
    assert r.returncode == 0 and r.output.split() == ["mismatches", "0"], r.output


def test_frame_cost(micropython: MicroPython, tmp_path: Path) -> None:
    """examples/frame_cost.py: the per-frame table for the three models, and the viper and
    plain post-processing finding the same things (its exit status)."""
    import skimage.data

    real = shared_models("real", *REAL, *NANODET, *MNET)
    write_ppm(tmp_path / "coffee.ppm", skimage.data.coffee())
    r = micropython.run(REPO / "examples" / "frame_cost.py", str(tmp_path / "coffee.ppm"), str(real), "1",
                        cwd=REPO / "examples", heapsize="16M")
    assert r.returncode == 0, r.explain()
    rows = [line.split("|")[1:-1] for line in r.stdout.splitlines()[3:]]
    assert [row[0].strip() for row in rows] == ["SqueezeNet v1.1 227x227", "NanoDet-m 320 (letterbox)",
                                                 "RetinaFace mnet.25 320x320"], r.stdout
    assert [row[-1].strip() for row in rows] == ["5", "2", "0"], r.stdout  # top 5; a cup and a table; no face
    assert all(int(v) > 0 for row in rows[1:] for v in row[1:5]), r.stdout


# (netprofile: on MICROPYPATH on Unix, frozen in on the board)
PROFILE_SCRIPT = """
import ncnn_mp
from ncnn_mp_lib import netprofile
net = ncnn_mp.Net()
net.load_param(ncnn_mp.DataReader(from_memory={param}))
net.load_model({weights}, copy=False)
x = ncnn_mp.Mat(28, 28, 1)
x.fill(0.5)
clock = {clock}
rows = netprofile.profile(net, {{"data": x}}, clock)
print(repr([(r[0], r[1], r[3], r[4]) for r in rows]))
print(all(r[2] >= 0 for r in rows) and sum(r[2] for r in rows) > 0)
with net.create_extractor() as ex:
    ex.input("data", x)
    print(repr((ex.extract("fc").w, sum(r[4] for r in rows))))
netprofile.show(rows)
"""


def mnist_layers() -> list[tuple[str, str, list[tuple[int, ...]], int]]:
    """Each non-Input layer of MNIST with its output shape and bytes, from the wheel."""
    mnist = shared_models("mnist", "mnist.param", "mnist.bin")
    net = ncnn.Net()
    assert net.load_param(str(mnist / "mnist.param")) == 0 and net.load_model(str(mnist / "mnist.bin")) == 0
    ex = net.create_extractor()
    ex.input("data", ncnn.Mat(np.full((1, 28, 28), 0.5, dtype=np.float32)).clone())
    rows = []
    for layer in net.layers()[1:]:
        ret, m = ex.extract(net.blobs()[layer.tops[0]].name)
        assert ret == 0
        shape = {1: (m.w,), 3: (m.w, m.h, m.c)}[m.dims]
        rows.append((layer.name, layer.type, [shape], m.w * m.h * m.d * m.c * 4))
    return rows


def check_profile(output: str) -> None:
    lines = output.splitlines()
    want = mnist_layers()
    assert ast.literal_eval(lines[0]) == want, lines[0]
    assert lines[1] == "True", output
    assert ast.literal_eval(lines[2]) == (10, sum(r[3] for r in want))
    assert lines[3].split()[:2] == ["layer", "type"] and lines[-1].startswith("total"), output


def test_netprofile_on_unix(micropython: MicroPython, tmp_path: Path) -> None:
    mnist = shared_models("mnist", "mnist.param", "mnist.bin")
    script = tmp_path / "profile.py"
    script.write_text(PROFILE_SCRIPT.format(param=repr((mnist / "mnist.param").read_bytes()),
                                            weights=f"open({str(mnist / 'mnist.bin')!r}, 'rb').read()", clock="None"))
    r = micropython.run(script, cwd=REPO / "examples")
    assert r.returncode == 0, r.explain()
    check_profile(r.stdout)


@pytest.mark.mcu
def test_netprofile_on_the_board() -> None:
    """On the QEMU board, emulated instructions from its timer, the model in its ROMFS."""
    from ci.qemu import run_script
    from conftest import QemuBoard

    shared_models("mnist", "mnist.param", "mnist.bin")  # (the board's ROMFS has them when this machine does)
    source = PROFILE_SCRIPT.format(param="open('/rom/mnist.param', 'rb').read()",
                                   weights="open('/rom/mnist.bin', 'rb')", clock="__import__('qemu_board').time_ns")
    r = run_script("qemu", QemuBoard("qemu").binary, source.encode(), timeout=120, icount=True)
    assert r.returncode == 0, r.output
    check_profile(r.output)

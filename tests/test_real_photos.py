"""Real photos through real models on the Unix firmware, against the CPython wheel on the
same photo: SqueezeNet v1.1 (examples/squeezenet_classify.py) on scikit-image's photos, the
top 5 with labels, probabilities within 1e-4 of the wheel's and as ../shared/models/real's
README states them."""

from __future__ import annotations

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

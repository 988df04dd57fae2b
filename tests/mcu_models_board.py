# SPDX-License-Identifier: MIT
# The board side of tests/test_mcu_models.py (which prepends `CONFIG = {...}` and packs the
# files into the board's ROMFS): each model loaded with its weights in place in flash, one
# photo through it, every output compared with the CPython wheel's (packed in the ROMFS as
# Mats' bytes), faces and objects decoded on the board (ncnn_mp_lib/retinaface.py, nanodet.py),
# and what it cost.
import hashlib

import ncnn_mp
import qemu_board
from ncnn_mp_lib import nanodet, retinaface


def reserve():
    """What ncnn_mp asks of a thread beyond the layers' frames: from nets 1 and 2 layers deep."""
    need = []
    for p in (b"1 1\nInput data 0 1 data\n", b"2 2\nInput data 0 1 data\nReLU r 1 1 data out\n"):
        net = ncnn_mp.Net()
        net.load_param(ncnn_mp.DataReader(from_memory=b"7767517\n" + p))
        need.append(net.stack_needed())
    return 2 * need[0] - need[1]


RESERVE = reserve()


def rom(name):
    return memoryview(open("/rom/" + name, "rb"))


def digest(name):
    return hashlib.sha256(rom(name)).digest().hex()[:16]


def run_model(model):
    before = digest(model + ".bin")
    net = ncnn_mp.Net()
    qemu_board.stack_mark()
    net.load_param(ncnn_mp.DataReader(from_memory=rom(model + ".param")))
    net.load_model(rom(model + ".bin"), copy=False)
    load_stack = qemu_board.stack_used()
    info = net.weights_info()
    print("weights", model, info["in_place"], info["copied"], info["converted"], info["ram"])
    w, h, c = CONFIG["size"]
    for n in range(CONFIG["images"]):
        qemu_board.stack_mark()
        t0 = qemu_board.time_ns()  # (-icount shift=0: 1 instruction per ns)
        with net.create_extractor() as ex:
            ex.input(CONFIG["input"], ncnn_mp.Mat(w, h, c, data=rom("in%d.f32" % n)))
            outs = {name: ex.extract(name) for name in CONFIG["outputs"]}
        ns = qemu_board.time_ns() - t0
        print("cost", model, n, ns, qemu_board.c_heap()[1])
        # The C stack the load and the extract took (from this frame down: more than ncnn's
        # part) against what ncnn_mp asks of a thread for them (the reserve: a one-layer net's).
        print("stack", model, n, load_stack, qemu_board.stack_used(), net.stack_needed(), RESERVE)
        report(model, n, outs)
    net.close()
    print("flash unchanged", model, digest(model + ".bin") == before)


def report(model, n, outs):
    worst = 0.0
    for name, out in outs.items():  # the wheel's output, laid out as this Mat (cstep padding)
        ref = ncnn_mp.Mat(out.w, out.h, out.c, data=rom("ref_%s_%d_%s.f32" % (model, n, name)))
        a, b = memoryview(out), memoryview(ref)
        for ch in range(out.c):
            at = ch * out.cstep
            for i in range(at, at + out.w * out.h):
                worst = max(worst, abs(a[i] - b[i]))
    print("maxdiff", model, n, worst)
    if CONFIG["detector"] == "retinaface":
        by_stride = {}
        for stride in retinaface.STRIDES:
            cls, bbox, landmark = (outs[name] for name in retinaface.output_names(stride))
            by_stride[stride] = (cls.w, cls.h, cls.cstep, memoryview(cls), memoryview(bbox), memoryview(landmark))
        t0 = qemu_board.time_ns()
        faces = retinaface.detect(by_stride)
        print("decode", model, n, qemu_board.time_ns() - t0)
        for f in faces:
            print("face", model, n, "%.5f %.3f %.3f %.3f %.3f" % tuple(f[:5]))
    elif CONFIG["detector"] == "nanodet":
        by_stride = {}
        for stride in nanodet.STRIDES:
            cls, dis = (outs[name] for name in nanodet.OUTPUTS[stride])
            by_stride[stride] = (CONFIG["size"][0] // stride, cls.h, memoryview(cls), memoryview(dis))
        t0 = qemu_board.time_ns()
        objects = nanodet.detect(by_stride)
        print("decode", model, n, qemu_board.time_ns() - t0)
        for o in objects:
            print("object", model, n, "%.5f %.3f %.3f %.3f %.3f %d" % o)
    else:
        scores = list(memoryview(outs[CONFIG["outputs"][0]]))
        print("top1", model, n, scores.index(max(scores)))


for model in CONFIG["models"]:
    run_model(model)

# SPDX-License-Identifier: MIT
# The board side of tests/test_ram_board.py (which prepends `CONFIG = {...}` and packs the files
# into the board's ROMFS; on Unix they are in the folder CONFIG["root"]): a detector on a board
# with an ESP32's RAM, as its program would run it. The arena first, from the plan made on the
# qemu board (CONFIG["plan"]; none: ncnn's own allocator, the desktop reference), then the model
# with its weights in place in flash, then the camera frame (RGB565, big-endian, in RAM as a
# camera driver's buffer is) straight to the model's int8 input in the arena (given to the
# extractor alone: it is freed once the first layer has read it), the outputs extracted in the
# order the plan saw (int8 ones read as q / scale: Net.output_int8_scale), decoded by
# ncnn_mp_lib (CONFIG["detector"]: "retinaface" faces or "nanodet" objects), and what the
# board's RAM held.
import gc

import ncnn_mp
from ncnn_mp_lib import nanodet, retinaface
from ncnn_mp_lib.detection import Quantized

try:
    import qemu_board  # a QEMU board: ncnn's C heap
except ImportError:
    qemu_board = None


def rom(name):
    """A file of the ROMFS: a view of the flash on a board, its bytes on Unix."""
    if qemu_board:
        return memoryview(open("/rom/" + name, "rb"))
    with open(CONFIG["root"] + "/" + name, "rb") as f:
        return f.read()


def scores(net, name, m):
    """An output as the decoders read it: its floats, or an int8 one's values q / scale."""
    scale = net.output_int8_scale(name)
    return memoryview(m) if scale is None else Quantized(memoryview(m), scale)


arena = ncnn_mp.Allocator(arena=rom(CONFIG["plan"])) if CONFIG["plan"] else None
net = ncnn_mp.Net()
net.opt.num_threads = 1
if arena:
    net.opt.set_blob_allocator(arena)
    net.opt.set_workspace_allocator(arena)
net.load_param(ncnn_mp.DataReader(from_memory=rom(CONFIG["model"] + ".param")))
net.load_model(rom(CONFIG["model"] + ".bin"), copy=False)
w, h = CONFIG["size"]
frame = bytearray(rom("frame.rgb565"))
nano = CONFIG["detector"] == "nanodet"
blob = nanodet.INPUT if nano else "data"
scale = net.input_int8_scale(blob)
with net.create_extractor() as ex:
    if nano:  # (BGR, normalized, as the model was trained)
        ex.input(blob, ncnn_mp.Mat.from_pixels_int8(frame, ncnn_mp.Mat.PIXEL_RGB565_BE | ncnn_mp.Mat.PIXEL_BGR << 16,
                                                    w, h, w, h, scale, nanodet.MEAN, nanodet.NORM, 0, arena))
    else:
        ex.input(blob, ncnn_mp.Mat.from_pixels_int8(frame, ncnn_mp.Mat.PIXEL_RGB565_BE, w, h, w, h, scale,
                                                    None, None, 0, arena))
    outs = {name: ex.extract(name) for name in net.output_names()}
if nano:
    by_stride = {}
    for stride in nanodet.STRIDES:
        cls, dis = nanodet.OUTPUTS[stride]
        by_stride[stride] = (w // stride, outs[cls].h, scores(net, cls, outs[cls]), scores(net, dis, outs[dis]))
    for o in nanodet.detect(by_stride):
        print("object %.5f %.3f %.3f %.3f %.3f %d" % tuple(o))
else:
    by_stride = {}
    for stride in retinaface.STRIDES:
        cls, bbox, landmark = (outs[name] for name in retinaface.output_names(stride))
        by_stride[stride] = (cls.w, cls.h, cls.cstep, memoryview(cls), memoryview(bbox), memoryview(landmark))
    for f in retinaface.detect(by_stride):
        print("face %.5f %.3f %.3f %.3f %.3f" % tuple(f[:5]))
if arena:
    print("arena", arena.size, arena.peak, arena.unplanned)
if qemu_board:
    gc.collect()
    in_use, high_water, heap = qemu_board.c_heap()
    print("c_heap", in_use, high_water, heap)
    print("py_heap", gc.mem_alloc(), gc.mem_alloc() + gc.mem_free())

# SPDX-License-Identifier: MIT
# The MicroPython side of `make preflight` (ncnn_mp_tools/preflight.py runs it through device.py,
# after CONFIG and probe_common.py, on the Unix firmware or on the QEMU board, files in its ROMFS):
# loads each model as a board would (weights in place), runs one extract of every output
# from inputs of the given shapes, and prints what it measured as one Python literal a model.
# CONFIG["frame"] (a pixel format's name, e.g. "RGB565"): each input made from a camera frame of
# its size as a board's program makes it, Mat.from_pixels_int8 where the model's first layers
# read int8, else from_pixels_resize, counted with the blobs (and freed once the first layers
# have read it, as a one-line ex.input(...) leaves it). CONFIG["arena"] (a size, or a plan as hex): the run as a
# board runs it in an arena reserved at boot (Allocator(arena=...)) for the inputs, blobs and
# workspace, so that the C heap's high-water is the board's, and the arena's plan of what it
# handed out (Allocator.plan()); else a counting Allocator measures the peak.
import gc

FRAME_BYTES = {"RGB565": 2, "RGB565_BE": 2, "YUYV": 2, "NV12": 1, "NV21": 1, "RGB": 3, "BGR": 3, "GRAY": 1}


def c_heap():
    return qemu_board.c_heap()[:2] if qemu_board else (None, None)


def make_frame(w, h):
    """A frame of w x h pixels in CONFIG["frame"]: a gradient."""
    name = CONFIG["frame"]
    rows = h * 3 // 2 if name in ("NV12", "NV21") else h
    frame = bytearray(w * rows * FRAME_BYTES[name])
    for i in range(len(frame)):
        frame[i] = (i * 7 + i // 251) & 255
    return frame


def frame_input(net, blob, frame, w, h, allocator):
    """The frame as the input Mat of `blob`, as a board's program makes it."""
    ptype = getattr(ncnn_mp.Mat, "PIXEL_" + CONFIG["frame"])
    scale = net.input_int8_scale(blob)
    if scale is not None:
        return ncnn_mp.Mat.from_pixels_int8(frame, ptype, w, h, w, h, scale, None, None, 0, allocator), scale
    return ncnn_mp.Mat.from_pixels_resize(frame, ptype, w, h, w, h, 0, allocator), None


def probe(model):
    gc.collect()
    py_before = gc.mem_alloc()
    c_before, _ = c_heap()
    given = CONFIG.get("arena")
    arena = None if not given else ncnn_mp.Allocator(arena=given if isinstance(given, int) else bytes.fromhex(given))
    c_arena, _ = c_heap()
    counting = arena or ncnn_mp.Allocator(counting=True)  # blobs and workspace, counted
    net = ncnn_mp.Net()
    for key, value in CONFIG["opt"].items():
        setattr(net.opt, key, value)
    net.opt.set_blob_allocator(counting)
    net.opt.set_workspace_allocator(counting)
    print("loading", model["param"])  # (progress: what a board that dies printed last)
    load(net, model, CONFIG["copy"])
    weights = net.weights_info()
    print("loaded; extracting")
    c_loaded, c_peak_loaded = c_heap()
    gc.collect()
    py_loaded = gc.mem_alloc()
    inputs, scales = [], []
    frames = [make_frame(w, h) if CONFIG.get("frame") else None for _, (w, h, _) in model["inputs"]]
    t_frame = qemu_board.time_ns() if qemu_board else 0
    for (blob, (w, h, c)), frame in zip(model["inputs"], frames):
        if frame is not None:
            m, scale = frame_input(net, blob, frame, w, h, counting)
            scales.append((blob, scale))
        else:
            m = ncnn_mp.Mat(w, h, c)
            m.fill(0.5)
        inputs.append((blob, m))
    outputs = model["outputs"] or net.output_names()
    t0 = qemu_board.time_ns() if qemu_board else 0
    shapes = []
    with net.create_extractor() as ex:
        for blob, m in inputs:
            ex.input(blob, m)
        inputs = m = None  # (held by the extractor alone, as ex.input(name, Mat.from_pixels_int8(...)) leaves it)
        for blob in outputs:
            out = ex.extract(blob)
            shapes.append((blob, out.w, out.h, out.d, out.c))
        ns = qemu_board.time_ns() - t0 if qemu_board else 0
        c_extract, c_peak = c_heap()
        gc.collect()
        py_extract = gc.mem_alloc()
    print(repr({
        "model": model["param"],
        "weights": weights,
        "blob_peak": counting.peak,
        "arena": None if arena is None else arena.size,
        "unplanned": None if arena is None else arena.unplanned,
        # (a planned arena records nothing; an arena nothing was taken from has nothing to plan)
        "plan": arena.plan().hex() if isinstance(given, int) and arena.peak else None,
        "input_int8_scales": scales,
        "c_heap_arena": None if c_before is None or arena is None else c_arena - c_before,
        "c_heap_load": None if c_before is None else c_loaded - c_before,
        "c_heap_extract": None if c_before is None else c_extract - c_before,
        "c_heap_high_water": c_peak,
        "c_heap_other": None if c_before is None else c_peak - c_loaded,
        "c_heap_load_peak": c_peak_loaded,
        "py_heap_load": py_loaded - py_before,
        "py_heap_extract": py_extract - py_before,
        "py_heap_size": gc.mem_alloc() + gc.mem_free(),
        "instructions": ns if qemu_board else None,
        "frame_instructions": t0 - t_frame if qemu_board and CONFIG.get("frame") else None,
        "outputs": shapes,
    }))
    net.close()


for model in CONFIG["models"]:
    probe(model)

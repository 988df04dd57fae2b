# The MicroPython side of `make preflight` (ncnn_mp_tools/preflight.py runs it through device.py,
# after CONFIG and probe_common.py, on the Unix firmware or on the QEMU board, files in its ROMFS):
# loads each model as a board would (weights in place), runs one extract of every output
# from inputs of the given shapes, and prints what it measured as one Python literal a model.
import gc


def c_heap():
    return qemu_board.c_heap()[:2] if qemu_board else (None, None)


def probe(model):
    gc.collect()
    py_before = gc.mem_alloc()
    c_before, _ = c_heap()
    counting = ncnn_mp.Allocator(counting=True)  # blobs and workspace, counted
    net = ncnn_mp.Net()
    for key, value in CONFIG["opt"].items():
        setattr(net.opt, key, value)
    net.opt.set_blob_allocator(counting)
    net.opt.set_workspace_allocator(counting)
    print("loading", model["param"])  # (progress: what a board that dies printed last)
    load(net, model, CONFIG["copy"])
    weights = net.weights_info()
    print("loaded; extracting")
    c_loaded, _ = c_heap()
    gc.collect()
    py_loaded = gc.mem_alloc()
    inputs = []
    for blob, (w, h, c) in model["inputs"]:
        m = ncnn_mp.Mat(w, h, c)
        m.fill(0.5)
        inputs.append((blob, m))
    outputs = model["outputs"] or net.output_names()
    t0 = qemu_board.time_ns() if qemu_board else 0
    shapes = []
    with net.create_extractor() as ex:
        for blob, m in inputs:
            ex.input(blob, m)
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
        "c_heap_load": None if c_before is None else c_loaded - c_before,
        "c_heap_extract": None if c_before is None else c_extract - c_before,
        "c_heap_high_water": c_peak,
        "py_heap_load": py_loaded - py_before,
        "py_heap_extract": py_extract - py_before,
        "instructions": ns if qemu_board else None,
        "outputs": shapes,
    }))
    net.close()


for model in CONFIG["models"]:
    probe(model)

# SPDX-License-Identifier: MIT
# The MicroPython side of `make compare` (ncnn_mp_tools/compare.py runs it through device.py,
# after CONFIG and probe_common.py): loads the model as a board would (weights in place), feeds
# the host's input bytes, extracts every blob in the net's order through one Extractor (ncnn
# computes lazily and the Extractor keeps what it computed, so each extract costs one layer),
# and sends each one back as float32 in base64 lines:
#   @b NAME DIMS W H D C ELEMSIZE STEP   then   @d BASE64 ...   then   @e
# STEP 1: every element, dense (channel padding left out); STEP k: elements 0, k, 2k, ... only
# (CONFIG["limit"] caps what one blob sends: a board's UART is slow). A failed extract: @x NAME ERROR.
import array
import binascii
import gc

CHUNK = 768  # floats a line (4 KiB of base64): small allocations on a board's heap


def send(floats):
    for at in range(0, len(floats), CHUNK):
        print("@d", binascii.b2a_base64(floats[at:at + CHUNK]).decode().strip())


def send_blob(name, m):
    per = m.w * m.h * m.d
    n = per * m.c
    limit = CONFIG["limit"]
    step = 1 if not limit or n <= limit else (n + limit - 1) // limit
    print("@b", name, m.dims, m.w, m.h, m.d, m.c, m.elemsize, step)
    if m.elemsize == 4 and n:
        mv = memoryview(m)
        if step == 1:
            for ch in range(m.c):
                send(mv[ch * m.cstep:ch * m.cstep + per])
        else:
            sample = array.array("f", bytes(4 * CHUNK))  # (a chunk at a time: a board's Python heap is small)
            count = 0
            for i in range(0, n, step):
                sample[count] = mv[i // per * m.cstep + i % per]
                count += 1
                if count == CHUNK:
                    send(memoryview(sample))
                    count = 0
            send(memoryview(sample)[:count])
    print("@e")


def run():
    net = ncnn_mp.Net()
    net.opt.num_threads = 1
    load(net, {"param": ROOT + "/m.param", "bin": ROOT + "/m.bin", "binary_param": False})
    blobs = net.blobs()
    with net.create_extractor() as ex:
        for blob, (w, h, c), fname in CONFIG["inputs"]:
            ex.input(blob, ncnn_mp.Mat(w, h, c, data=read(ROOT + "/" + fname)))
        for layer in net.layers():
            for top in layer["tops"]:
                name = blobs[top]["name"]
                try:
                    m = ex.extract(name)
                except Exception as e:  # (a layer the firmware lacks, out of memory, ...)
                    print("@x", name, repr(e))
                    return
                send_blob(name, m)
                # Our Mat goes now, not at some later collection: while it holds the blob, a layer
                # computing in place on it must copy it first (ncnn's lightmode), which a board's
                # heap may not hold.
                m = None
                gc.collect()
    net.close()


run()

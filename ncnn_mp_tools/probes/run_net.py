# SPDX-License-Identifier: MIT
# A model run on a Unix firmware for the CPython side (ncnn_mp_tools/convert.py's int8 check,
# tests/test_mcu_models.py's references; not a probe of device.py: it takes arguments):
#   micropython run_net.py PARAM BIN INPUT W H C IN.f32 OUTDIR OUT...
# IN.f32 holds N inputs of W x H x C float32 (channel by channel); each output blob of each
# input is written to OUTDIR/<n>_<name>.f32 as float32, channel by channel without ncnn's
# channel padding, after a line "shape <name> w h c" (an int8 output: its values q / scale,
# Net.output_int8_scale, as the user's decoder reads them).
import sys
from array import array

import ncnn_mp

param, weights, in_name = sys.argv[1], sys.argv[2], sys.argv[3]
w, h, c = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
source, outdir, outs = open(sys.argv[7], "rb"), sys.argv[8], sys.argv[9:]
net = ncnn_mp.Net()
net.opt.num_threads = 1
net.load_param(param)
net.load_model(weights)
size = w * h * c * 4
n = 0
while True:
    chunk = source.read(size)  # (one input at a time: the Unix port's heap is small)
    if len(chunk) < size:
        break
    x = ncnn_mp.Mat(w, h, c)
    plane = memoryview(x)
    values = array("f", chunk)
    for q in range(c):
        plane[q * x.cstep:q * x.cstep + w * h] = values[q * w * h:(q + 1) * w * h]
    with net.create_extractor() as ex:
        ex.input(in_name, x)
        for name in outs:
            m = ex.extract(name)
            print("shape", name, m.w, m.h, m.c)
            v = memoryview(m)
            scale = net.output_int8_scale(name)
            with open("%s/%d_%s.f32" % (outdir, n, name), "wb") as f:
                for q in range(m.c):
                    part = v[q * m.cstep:q * m.cstep + m.w * m.h]
                    if scale is None:
                        f.write(bytes(part))
                        continue
                    out = array("f", bytes(4096))  # (signed bytes, which memoryview reads unsigned)
                    for at in range(0, len(part), 1024):
                        piece = part[at:at + 1024]
                        for i in range(len(piece)):
                            out[i] = (piece[i] - 256 if piece[i] > 127 else piece[i]) / scale
                        f.write(bytes(out)[:4 * len(piece)])
    n += 1
net.close()

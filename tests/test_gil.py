# SPDX-License-Identifier: MIT
"""On a port with a GIL (esp32's MicroPython; here the unix-gil firmware, ci/profiles.toml),
ncnn_mp lets the GIL go while ncnn computes, so other threads run during a long extract,
load or built-in layer forward, and takes it back for Python layers, whose exceptions
still surface in their own thread (issue 11)."""

from __future__ import annotations

from conftest import MicroPython

SCRIPT = """
import _thread, time
import ncnn_mp

# A long net of ncnn's own layers with a Python layer in the middle.
lines = ["Input data 0 1 data 0=192 1=192 2=32"]
for i in range(12):
    src = "b%d" % (i - 1) if i else "data"
    if i == 6:
        lines.append("Twice t 1 1 %s b%d" % (src, i))
    else:
        lines.append("Convolution c%d 1 1 %s b%d 0=32 1=3 4=1 5=1 6=9216" % (i, src, i))
param = "7767517\\n%d %d\\n%s\\n" % (len(lines), len(lines), "\\n".join(lines))


class Twice(ncnn_mp.Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def forward_inplace(self, blob, opt):
        if blob.w != 192:
            raise ValueError("raised for w=%d" % blob.w)
        calls[0] += 1


calls = [0]
net = ncnn_mp.Net()
net.opt.num_threads = 1
net.register_custom_layer("Twice", Twice)
net.load_param_mem(param)
with ncnn_mp.DataReader(zeros=True) as dr:
    net.load_model(dr)
x = ncnn_mp.Mat(192, 192, 32)
x.fill(1.0)

count = [0]
running = [True]


def spin():
    while running[0]:
        count[0] += 1


_thread.start_new_thread(spin, ())
time.sleep(0.05)

def progress_during(label, f):
    before = count[0]
    t0 = time.ticks_ms()
    f()
    ms = time.ticks_diff(time.ticks_ms(), t0)
    ran = count[0] - before
    print(label, "the other thread ran:", ran > 1000)
    print(label, ms, "ms,", ran, "loop rounds", file=sys.stderr)

import sys

def extract():
    with net.create_extractor() as ex:
        ex.input("data", x)
        ex.extract("b11")

progress_during("extract", extract)
print("Python layer ran", calls[0])
conv = ncnn_mp.Layer("Convolution")
pd = ncnn_mp.ParamDict()
pd.set(0, 32); pd.set(1, 3); pd.set(4, 1); pd.set(5, 1); pd.set(6, 9216)
conv.load_param(pd)
conv.load_model(ncnn_mp.ModelBin(from_datareader=ncnn_mp.DataReader(zeros=True)))
opt = ncnn_mp.Option()
opt.num_threads = 1
progress_during("Layer.forward", lambda: [conv.forward(x, opt) for _ in range(3)])

# Exceptions stay in their thread while the GIL moves between threads.
seen = []
def other():
    try:
        with net.create_extractor() as ex:
            ex.input("data", ncnn_mp.Mat(100, 100, 32))
            ex.extract("b11")
    except ValueError as e:
        seen.append(str(e))
    seen.append("done")

_thread.start_new_thread(other, ())
extract()
while "done" not in seen:
    time.sleep(0.01)
print("other thread got", seen)
running[0] = False
time.sleep(0.05)
print("ok")
"""

EXPECTED = """extract the other thread ran: True
Python layer ran 1
Layer.forward the other thread ran: True
other thread got ['raised for w=100', 'done']
ok
"""


def test_other_threads_run_while_ncnn_computes(micropython_gil: MicroPython) -> None:
    r = micropython_gil.run_source(SCRIPT, timeout=300)
    assert r.returncode == 0, r.explain()
    assert r.stdout == EXPECTED, r.explain()

# SPDX-License-Identifier: MIT
# Extractor.extract's hook in threads: each extract's hook is called in the thread that runs
# it, for its own layers only, while other threads extract from the same Net with hooks of
# their own or none; a cancel in one thread stops that thread's extract only.
try:
    import _thread
except ImportError:
    print("SKIP: no _thread")
    raise SystemExit

import time

import ncnn_mp
from mptest import getenv, mat, packed, require

require("NCNN_STRING")  # a text param, layer names

THREADS = 4
ROUNDS = 20 if getenv("NCNN_MP_UNDER_VALGRIND") == "1" else 300
PARAM = """7767517
6 7
Input data 0 1 data
ReLU r0 1 1 data a
Split sp 1 2 a b c
ReLU r1 1 1 b d 0=0.5
Sigmoid s 1 1 c e
BinaryOp add 2 1 d e out 0=0
"""
ORDER = ["r0", "r1", "s", "add"]


class Cancel(Exception):
    pass


net = ncnn_mp.Net()
net.load_param_mem(PARAM)
net.load_model(ncnn_mp.DataReader(zeros=True))


def run(hook):
    ex = net.create_extractor()
    ex.input("data", mat(-2, -1, 0, 1, 2))
    return packed(ex.extract("out", hook=hook))


plain = run(None)
results = {}
lock = _thread.allocate_lock()


def worker(k):
    me = _thread.get_ident()
    wrong = 0
    for r in range(ROUNDS):
        calls = []

        def hook(index, name, type, count):
            calls.append((_thread.get_ident(), name))
            if k == 1 and r % 3 == 0 and name == "s":
                raise Cancel(k)

        try:
            out = run(None if k == 0 else hook)
        except Cancel as e:
            wrong += e.args[0] != k or [n for _, n in calls] != ORDER[:3]
        else:
            wrong += out != plain
            if k != 0:
                wrong += [n for _, n in calls] != ORDER
        wrong += any(t != me for t, _ in calls)
    with lock:
        results[k] = wrong


for k in range(THREADS):
    _thread.start_new_thread(worker, (k,))
deadline = time.time() + 300
while len(results) < THREADS and time.time() < deadline:
    time.sleep(0.05)
print("threads finished", len(results) == THREADS)
print("wrong results, calls or cancels per thread", [results.get(k) for k in range(THREADS)])

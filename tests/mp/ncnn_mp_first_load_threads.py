# SPDX-License-Identifier: MIT
# Four threads make their first Net load at the same moment. The load reads the C heap in use
# (mallinfo2 on glibc); on a firmware whose malloc is not glibc's (AddressSanitizer's) that is
# glibc's first malloc call, and glibc starts its malloc without a lock: two threads at once
# both took its main arena (an abort when the second exited) or read it half made (SIGSEGV in
# int_mallinfo), in about 1 run in 7. tests/test_first_load_threads.py runs this many times
# under make sanitize; here it checks the loads themselves.
try:
    import _thread
except ImportError:
    print("SKIP: no _thread")
    raise SystemExit

import time

import ncnn_mp

PARAM = "7767517\n2 2\nInput data 0 1 data 0=4\nReLU r 1 1 data out\n"
THREADS = 4
state = {"go": False, "ready": 0, "done": 0, "failed": []}
lock = _thread.allocate_lock()


def worker():
    try:
        net = ncnn_mp.Net()
        net.load_param_mem(PARAM)
        with lock:
            state["ready"] += 1
        while not state["go"]:
            pass
        net.load_model(b"")
    except Exception as e:
        state["failed"].append(repr(e))
    with lock:
        state["done"] += 1


for t in range(THREADS):
    _thread.start_new_thread(worker, ())
deadline = time.time() + 60
while state["ready"] + len(state["failed"]) < THREADS and time.time() < deadline:
    time.sleep_ms(1)
state["go"] = True
while state["done"] < THREADS and time.time() < deadline:
    time.sleep_ms(1)
time.sleep_ms(20)  # (the threads' exits: where a shared arena aborted)
print("loaded", state["done"], "failed", state["failed"])

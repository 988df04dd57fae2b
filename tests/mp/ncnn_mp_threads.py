# SPDX-License-Identifier: MIT
# Threads (issue 11): several threads extracting at once through Python layers, on their
# own Nets and on one shared Net (each with its own Extractor, ncnn's own pattern), some
# layers raising; gc.collect() in another thread; a net cleared and reloaded while others
# run it. Every result must be right and every exception must surface in the thread whose
# layer raised it. The Unix port runs threads without a GIL: they truly run in parallel.
try:
    import _thread
except ImportError:
    print("SKIP: no _thread")
    raise SystemExit

import gc
import sys
import time

import ncnn_mp
from mptest import STALE_NETS, getenv, judged, mat, settle

THREADS = 4
ROUNDS = 60 if getenv("NCNN_MP_UNDER_VALGRIND") == "1" else 300
PARAM = "7767517\n3 3\nInput data 0 1 data 0=4\nTagged t 1 1 data mid\nReLU r 1 1 mid out\n"


class Tagged(ncnn_mp.Layer):
    """out = in * 2 - 1; raises, naming the value, when the first input is negative."""

    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, opt):
        if bottom[0] < 0:
            raise ValueError("tag %d" % int(-bottom[0]))
        top = bottom.clone()
        for i in range(4):
            top[i] = bottom[i] * 2.0 - 1.0
        return top


def new_net():
    net = ncnn_mp.Net()
    net.opt.num_threads = 1
    net.register_custom_layer("Tagged", Tagged)
    net.load_param_mem(PARAM)
    net.load_model(b"")
    return net


def expected(xs):
    return [max(x * 2.0 - 1.0, 0.0) for x in xs]


state = {"done": 0, "failures": [], "raised": [0] * THREADS, "right": [0] * THREADS, "collided": 0}
lock = _thread.allocate_lock()


def record_failure(text):
    with lock:
        state["failures"].append(text)


def worker(t, net, shared):
    own = net is None
    while not state["go"]:  # (a side task first: under valgrind the workers could end before it starts)
        time.sleep(0.001)
    try:
        if own:
            net = new_net()
        for i in range(ROUNDS):
            tag = 1000 * (t + 1) + i
            # Every fifth round raises in this thread's layer, tagged with this thread's number.
            xs = [-tag, 1.0, 2.0, 3.0] if i % 5 == 0 else [float(t), float(i % 7), 0.25, -1.0]
            try:
                ex = net.create_extractor()
                ex.input("data", mat(*xs))
                out = ex.extract("out")
                ex.close()
            except ValueError as e:
                msg = str(e)
                if i % 5 == 0 and msg == "tag %d" % tag:
                    state["raised"][t] += 1
                    continue
                if shared and "cleared or loaded again" in msg or "no weights loaded" in msg:
                    with lock:
                        state["collided"] += 1  # the net was reloaded under this Extractor
                    continue
                record_failure("thread %d round %d: ValueError %s" % (t, i, msg))
                continue
            except RuntimeError as e:
                if shared and "ncnn is loading, clearing or running this net" in str(e):
                    with lock:
                        state["collided"] += 1
                    continue
                record_failure("thread %d round %d: RuntimeError %s" % (t, i, e))
                continue
            got = [round(out[k], 4) for k in range(4)]
            if i % 5 == 0 or got != expected(xs):
                record_failure("thread %d round %d: got %s for %s" % (t, i, got, xs))
            else:
                state["right"][t] += 1
    except Exception as e:
        record_failure("thread %d died: %s %s" % (t, type(e).__name__, e))
    with lock:
        state["done"] += 1


def run(label, nets, shared, extra=None, reloading=False):
    state["done"] = 0
    state["failures"] = []
    state["raised"] = [0] * THREADS
    state["right"] = [0] * THREADS
    state["collided"] = 0
    state["go"] = extra is None  # else the side task lets the workers go once it runs
    for t in range(THREADS):
        _thread.start_new_thread(worker, (t, nets[t], shared))
    if extra:
        extra()
    deadline = time.time() + 600
    while state["done"] < THREADS and time.time() < deadline:
        time.sleep(0.01)
    print(label, "threads finished", state["done"] == THREADS)
    print(label, "failures", state["failures"][:5])
    # A round ends right, in its own thread's exception, or (shared net being reloaded) in a collision.
    accounted = [state["right"][t] + state["raised"][t] for t in range(THREADS)]
    # Every raise was received, by its own thread (a reload may turn some rounds into collisions).
    print(label, "every exception in its own thread", state["raised"] == [ROUNDS // 5] * THREADS or reloading)
    print(label, "rounds accounted for", sum(accounted) + state["collided"] == THREADS * ROUNDS)


# Each thread its own Net, made in the thread.
run("own nets:", [None] * THREADS, False)

# One Net shared by every thread, each with its own Extractor; a collector thread.
shared = new_net()
collecting = {"on": True}


def collector():
    while collecting["on"]:
        gc.collect()
        time.sleep(0.001)


_thread.start_new_thread(collector, ())
run("shared net:", [shared] * THREADS, True)
print("shared net: no collisions without a reload", state["collided"] == 0)
collecting["on"] = False

# The shared net cleared and reloaded by the main thread while the workers run it.
reloads = {"n": 0, "refused": 0}


def reload_while_running():
    while state["done"] < THREADS:
        try:
            shared.clear()
            shared.load_param_mem(PARAM)
            shared.load_model(b"")
            reloads["n"] += 1
        except RuntimeError:
            reloads["refused"] += 1  # a worker was inside ncnn on it
        state["go"] = True
        time.sleep(0.001)


run("reloaded net:", [shared] * THREADS, True, reload_while_running, reloading=True)
print("reloaded net: reloads happened", reloads["n"] + reloads["refused"] > 0)
# After all that the shared net still answers right, loaded once more (a reload the workers
# interrupted may have left it cleared).
shared.clear()
shared.load_param_mem(PARAM)
shared.load_model(b"")
ex = shared.create_extractor()
ex.input("data", mat(1.0, 2.0, 3.0, 4.0))
out = ex.extract("out")
print("shared net afterwards", [round(out[k], 4) for k in range(4)])
ex.close()
shared.close()
del shared, ex, out
time.sleep(0.1)
print("live custom layers after: at most STALE_NETS", judged("live custom layers after", settle(), STALE_NETS))

# SPDX-License-Identifier: MIT
# MicroPython's collector on the Unix port's threads (no GIL), without ncnn_mp: a thread that
# stores new objects into objects a collection in progress has already marked, and then holds
# them nowhere else, loses them to that collection (tests/mp/gc_settled.py says why).
#
#   micropython gc_store_race.py MODE SECONDS    (MICROPYPATH naming tests/mp)
#
# MODE plain: obj.x = value; MODE settled: gc_settled.setattr_settled(obj, "x", value).
# Two threads store floats into attributes of objects the module's globals hold (a collection
# marks those first), each keeping its new floats in a list on its own stack until stored,
# while a third thread collects. A float freed under its attribute is read back as whatever
# was made there next. Prints "<MODE>: <stores> stores, <lost> lost".
#
# Every container is a nest of 8: the collector's mark stack holds 64 entries, and when one
# overflows it, the collection ends by scanning every marked block again, which finds what
# the stores would otherwise lose (so the race shows with small objects, as a Python layer's
# attributes are, and hides behind a list of hundreds).
import _thread
import gc
import sys
import time

from gc_settled import setattr_settled

MODE = sys.argv[1]
SECONDS = float(sys.argv[2])
THREADS = 2
K = 8


class Holder:
    def __init__(self):
        self.x = 0.0  # (a store that adds an attribute grows a table: gc_settled)


NESTS = [[[Holder() for _ in range(K)] for _ in range(K)] for _ in range(THREADS)]
state = {"run": True, "stores": 0, "lost": 0, "done": 0}
lock = _thread.allocate_lock()


def expected(t, i, j):
    return t * 1000 + i * K + j + 0.5


def worker(t):
    nest = NESTS[t]
    stores = lost = 0
    while state["run"]:
        fresh = [[expected(t, i, j) for j in range(K)] for i in range(K)]  # only this frame holds them
        # From here to the check nothing allocates (plain): a collection runs on meanwhile.
        for i in range(K):
            for j in range(K):
                if MODE == "settled":
                    setattr_settled(nest[i][j], "x", fresh[i][j])
                else:
                    nest[i][j].x = fresh[i][j]
                fresh[i][j] = None
                for _ in range(20):  # a wider window, without allocating
                    pass
        junk = [[(i, j) for j in range(K)] for i in range(4 * K)]  # what was freed is made again
        for i in range(K):
            for j in range(K):
                x = nest[i][j].x
                lost += type(x) is not float or x != expected(t, i, j)
        stores += K * K
        junk = None
    with lock:
        state["stores"] += stores
        state["lost"] += lost
        state["done"] += 1


def collector():
    # A chain this thread's stack holds: marked after the globals and before the workers'
    # stacks, it widens the window between the two.
    chain = None
    for i in range(3000):
        chain = [chain, str(i)]
    n = 0
    while state["run"]:
        gc.collect()
        n += 1
        time.sleep_us(n % 97 * 10)  # collections start anywhere in the workers' loops
    with lock:
        state["done"] += 1


for t in range(THREADS):
    _thread.start_new_thread(worker, (t,))
_thread.start_new_thread(collector, ())
time.sleep_ms(int(SECONDS * 1000))
state["run"] = False
while state["done"] < THREADS + 1:
    time.sleep_ms(10)
print("%s: %d stores, %d lost" % (MODE, state["stores"], state["lost"]))

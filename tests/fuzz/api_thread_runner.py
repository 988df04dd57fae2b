# SPDX-License-Identifier: MIT
# The MicroPython side of the API fuzzer's threaded mode (tests/fuzz/api_fuzz.py --threads N):
# several _thread threads in one process (the Unix port has no GIL: they run at once) run
# random sequences of extracts through Python custom layers, some on Nets of their own,
# some on Nets every thread shares (each with an Extractor of its own, or now and then one
# shared Extractor), while threads clear and reload the shared Nets and collect garbage.
#
#   micropython api_thread_runner.py BATCH RESULTS    (MICROPYPATH naming tests/mp: fuzzlib sets it)
#
# BATCH: one JSON line {"threads": n, "passes": p, "texts": [...], "inputs": [...], "shared": [...]},
# then one JSON line per thread: {"t": t, "seqs": [{"id": s, "ops": [op, ...]}, ...]}.
# RESULTS: "FAIL t<t>-seq<s> op <i>: why" for what must not happen, "T <t> <outcome>:<count> ..."
# per thread and pass, "P <pass> <bytes>" the heap (settled) after each pass, "DONE <live layers>".
# RESULTS.t<t>: thread t's progress ("S <seq>", "s <seq> <op>" before each op): which op each
# thread was in when the process died.
#
# What a thread must see:
# - An exception raised by a Python layer carries the tag of the thread whose extract ran it
#   ("t3-seq17-run2"): one with another thread's tag is an exception that crossed threads.
# - On a Net of its own (no other thread touches it), an extract whose layer raises comes out
#   as that very exception; one that should work works, with the reference's values.
# - On a shared Net, a call that collides with another thread's (a clear or reload while this
#   thread runs it, the shared Extractor in use) may raise RuntimeError or ValueError; an extract
#   that works gives the reference's values, with this thread's own tag in them.
# - Nothing else raises, and the process never dies.
# - A Net with weights (TagW's and MemoryData's) has them in place, in a bytes object only the
#   net holds: reloaded under the other threads, the old one goes to the collector, and
#   "churn" fills what it freed; an extract still gives the reference's values.
# - Python DataReaders every thread shares ("prd" ops: one over a param text, one over a .bin):
#   threads load Nets of their own through the same reader at once, rewind and close it. A
#   load through it may work or raise ValueError, RuntimeError or TypeError (each load gets
#   part of the stream: results may be partial); the Net then loads from plain bytes and
#   extracts the reference.
#
# The Unix port's threads run without a GIL, and then MicroPython's collector frees a new
# object a thread stores into one a collection in progress has already marked (a Python
# layer's attribute: the layer is in ncnn_mp's roots, marked first), a limitation of
# MicroPython's, not ncnn_mp's (docs/limits.md, tests/gc_store_race.py). The layers here and
# the threads' reports store new objects through gc_settled, which waits such a collection
# out, into attributes and items made beforehand, so that what fails here is ncnn_mp's: before, api-threads-6-6 failed about 1 run in 60
# under load (a layer's scale read back as a tuple, a lost attribute, wrong values).
import _thread
import gc
import json
import struct
import sys
import time

import ncnn_mp

# (tests/mp is on MICROPYPATH, which fuzzlib's firmware() sets)
from gc_settled import setattr_settled, setitem_settled  # noqa: E402
from mptest import STALE_NETS, settle  # noqa: E402

TEXTS = []      # param text per net kind (from the batch header)
INPUTS = []     # [shape, values] per input
WEIGHTS = []    # per net kind: the floats of its .bin, or None (weightless)
REF = {}        # (kind, input) -> the output's values, computed in one thread first
SHARED = []     # [net, kind, extractor] per shared net, made by the main thread each pass
READERS = []    # [SharedReader, net kind, "param" | "weights"] per shared reader, made each pass
LOCK = _thread.allocate_lock()
DONE = [0]      # threads finished in this pass (under LOCK)


# ---------------------------------------------------------------------------
# The custom layers. Elements 0 and 1 of every blob are control values, passed through
# unchanged: the tag of the extract (thread, sequence, run) and what the layer does.

def tag_name(tag):
    return "t%d-seq%d-run%d" % (tag // 100000, tag // 100 % 1000, tag % 100)


def misbehave(blob):
    tag, mode = int(blob[0]), int(blob[1])
    if mode == 1:
        raise ValueError(tag_name(tag))
    if mode == 3:
        raise RuntimeError(tag_name(tag))
    if mode == 2:
        gc.collect()
    elif mode == 4:
        time.sleep_ms(1)


class Tag(ncnn_mp.Layer):
    """In place: every value but the control ones times param 0."""

    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.scale = 1.0  # (made here: see gc_settled)

    def load_param(self, pd):
        setattr_settled(self, "scale", pd.get(0, 1.0))

    def forward_inplace(self, blob, opt):
        misbehave(blob)
        v = memoryview(blob)
        s = self.scale
        for i in range(2, len(v)):
            v[i] *= s


class TagF(ncnn_mp.Layer):
    """A new top: every value but the control ones times param 0, plus one."""

    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.scale = 1.0

    def load_param(self, pd):
        setattr_settled(self, "scale", pd.get(0, 1.0))

    def forward(self, bottom, opt):
        misbehave(bottom)
        top = bottom.clone()
        v = memoryview(top)
        s = self.scale
        for i in range(2, len(v)):
            v[i] = v[i] * s + 1
        return top


class TagM(ncnn_mp.Layer):
    """Two bottoms, one top: their sum (the control values of the first)."""

    def __init__(self):
        super().__init__()
        self.one_blob_only = False

    def forward(self, bottoms, opt):
        misbehave(bottoms[0])
        top = bottoms[0].clone()
        v, w = memoryview(top), memoryview(bottoms[1])
        for i in range(2, len(v)):
            v[i] += w[i]
        return top


class TagW(ncnn_mp.Layer):
    """In place: every value but the control ones times the weight at its index, from the Mat
    it keeps from its ModelBin (in place: over the net's buffer; read in any thread)."""

    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.count, self.w = 16, None

    def load_param(self, pd):
        self.count = pd.get(0, 16)  # (a small int is no object on the heap)

    def load_model(self, mb):
        setattr_settled(self, "w", mb.load(self.count, 1))

    def forward_inplace(self, blob, opt):
        misbehave(blob)
        v, w, n = memoryview(blob), memoryview(self.w), self.count
        for i in range(2, len(v)):
            v[i] *= w[i % n]


class SharedReader(ncnn_mp.DataReader):
    """A Python reader loads in several threads read through at once: its position under a
    lock of its own, pieces of 3, 7, 64 bytes or all asked for, a yield now and then."""

    def __init__(self, data):
        super().__init__()
        self.data, self.pos, self.calls = data, 0, 0
        self.lock = _thread.allocate_lock()

    def read(self, n):
        with self.lock:
            self.calls += 1
            size = (3, 7, 64, n)[self.calls % 4]
            piece = self.data[self.pos:self.pos + min(n, size)]
            self.pos += len(piece)
            calls = self.calls
        if calls % 5 == 0:
            time.sleep_ms(0)
        return piece if calls % 3 else memoryview(piece)

    def rewind(self):
        with self.lock:
            self.pos = 0


def new_net(kind, threads=1):
    n = ncnn_mp.Net()
    n.opt.num_threads = threads
    n.register_custom_layer("Tag", Tag)
    n.register_custom_layer("TagF", TagF)
    n.register_custom_layer("TagM", TagM)
    n.register_custom_layer("TagW", TagW)
    load(n, kind)
    return n


def weights(kind):
    """A new bytes object holding kind's .bin (None: weightless)."""
    xs = WEIGHTS[kind] if kind < len(WEIGHTS) else None
    return None if xs is None else struct.pack("<%df" % len(xs), *xs)


def load(n, kind, copy=False):
    """Param and weights; weights in place from a bytes object only the net will hold, unless copy."""
    n.load_param(TEXTS[kind])
    w = weights(kind)
    if w is None:
        n.load_model(ncnn_mp.DataReader(zeros=True))
    else:
        n.load_model(w, copy=copy)


def churn():
    """Fill what collections freed (the weights of reloaded nets among it) with other bytes."""
    junk = [b"\x7f" * n for n in (128, 132, 144, 256) for _ in range(4)]
    return len(junk)


def new_input(i, tag, mode):
    shape, xs = INPUTS[i]
    m = ncnn_mp.Mat(*shape) if len(shape) != 3 else ncnn_mp.Mat(shape[0], shape[1], shape[2])
    m.fill(0.0)
    v = memoryview(m)  # (the Mats are float32 with no channel padding: see api_fuzz.THREAD_INPUTS)
    for j, x in enumerate(xs):
        v[j] = x
    v[0], v[1] = tag, mode
    return m


def values(m):
    return list(memoryview(m))


def close_to(a, b):
    return len(a) == len(b) and all(x == y or abs(x - y) <= 1e-4 * (1 + abs(y)) for x, y in zip(a, b))


def reference():
    """Every net kind on every input, one thread, no misbehaviour: what extracts must give."""
    for kind in range(len(TEXTS)):
        n = new_net(kind)
        for i in range(len(INPUTS)):
            with n.create_extractor() as ex:
                ex.input("data", new_input(i, 0, 0))
                REF[(kind, i)] = values(ex.extract("out"))
        n.close()


# ---------------------------------------------------------------------------
# One thread.

def parse_tag(msg):
    """The tag in an exception's message, as (thread, seq, run), or None."""
    i = msg.find("t")
    while i >= 0:
        part = msg[i + 1:].split("-seq", 1)
        if len(part) == 2 and part[0].isdigit():
            rest = part[1].split("-run", 1)
            if len(rest) == 2 and rest[0].isdigit():
                run = ""
                for ch in rest[1]:
                    if not ch.isdigit():
                        break
                    run += ch
                if run:
                    return int(part[0]), int(rest[0]), int(run)
        i = msg.find("t", i + 1)
    return None


class Worker:
    def __init__(self, t, out):
        self.t, self.out = t, out
        self.own = {}     # slot -> [net, kind, loaded]
        self.counts = {}
        self.fails = []
        self.where = (0, 0)

    def fail(self, why):
        if len(self.fails) < 40:
            self.fails.append("t%d-seq%d op %d: %s" % (self.t, self.where[0], self.where[1], why))

    def count(self, outcome):
        self.counts[outcome] = self.counts.get(outcome, 0) + 1

    def run(self, seqs):
        for seq in seqs:
            sid = seq["id"]
            self.out.write("S %d\n" % sid)
            for i, op in enumerate(seq["ops"]):
                self.out.write("s %d %d\n" % (sid, i))
                self.where = (sid, i)
                try:
                    self.step(op)
                    self.count("ok")
                except Exception as e:  # what each op may raise is judged inside it
                    self.count(type(e).__name__)
            self.out.write("R %d\n" % sid)
        for n in self.own.values():
            n[0].close()
        self.own.clear()

    def judge_exception(self, e, mine, mode, strict):
        """An exception out of an extract: tagged with another thread's run, lost, or fine."""
        msg = str(e)
        tag = parse_tag(msg)
        t = type(e).__name__
        if tag is not None and tag != mine:
            self.fail("%s(%r) surfaced in t%d-seq%d-run%d: raised by another extract's layer"
                      % (t, msg[:80], mine[0], mine[1], mine[2]))
            return
        want = "ValueError" if mode == 1 else "RuntimeError" if mode == 3 else None
        if tag is not None:
            if want is None:
                self.fail("%s(%r): this run's layer was not asked to raise" % (t, msg[:80]))
            elif t != want:
                self.fail("the layer raised %s, the extract %s(%r)" % (want, t, msg[:80]))
            return
        if strict:  # own net: nothing else can fail
            self.fail("%s(%r) where %s" % (t, msg[:80], "the layer's %s was expected" % want if want
                                           else "the extract should have worked"))
        elif t not in ("RuntimeError", "ValueError"):
            self.fail("%s(%r): a collision must raise RuntimeError or ValueError" % (t, msg[:80]))

    def extract(self, ex, kind, inp, mode, run, strict, any_input=False):
        mine = (self.t, self.where[0], run)
        tag = self.t * 100000 + self.where[0] * 100 + run
        try:
            ex.input("data", new_input(inp, tag, mode))
            got = values(ex.extract("out"))
        except Exception as e:
            self.judge_exception(e, mine, mode, strict)
            raise
        if mode in (1, 3):
            self.fail("extract worked though its layer raised %s" % ("ValueError" if mode == 1 else "RuntimeError"))
        if any_input:  # the shared Extractor: another thread's input() may have come in between
            if not any(close_to(got[2:], REF[(kind, i)][2:]) for i in range(len(INPUTS))):
                self.fail("shared Extractor: the result matches no input's reference")
            return
        if got[0] != tag:
            self.fail("the result carries tag %s, not its own run's %s" % (tag_name(int(got[0])), tag_name(tag)))
        if not close_to(got[2:], REF[(kind, inp)][2:]):
            self.fail("wrong values (net kind %d, input %d)" % (kind, inp))

    def step(self, op):
        what = op[0]
        if what == "net":  # ["net", slot, kind, num_threads]: a Net only this thread uses
            try:
                self.own[op[1]] = [new_net(op[2], op[3]), op[2], True]
            except Exception as e:
                self.fail("a Net of its own failed to load: %s(%r)" % (type(e).__name__, str(e)[:80]))
                raise
        elif what == "run":  # ["run", "own" | "shared" | "sharedex", slot, input, mode, run]
            where, k, inp, mode, run = op[1], op[2], op[3], op[4], op[5]
            if where == "own":
                if k not in self.own:
                    raise LookupError
                net, kind, loaded = self.own[k]
                try:
                    ex = net.create_extractor()
                except Exception as e:
                    self.judge_exception(e, (self.t, self.where[0], run), 0, loaded)
                    raise
                with ex:
                    self.extract(ex, kind, inp, mode, run, loaded)
            elif where == "shared":
                net, kind, _ = SHARED[k % len(SHARED)]
                try:
                    ex = net.create_extractor()
                except Exception as e:
                    self.judge_exception(e, (self.t, self.where[0], run), 0, False)
                    raise
                try:
                    self.extract(ex, kind, inp, mode, run, False)
                finally:
                    try:
                        ex.close()
                    except Exception as e:
                        self.judge_exception(e, (self.t, self.where[0], run), 0, False)
            else:
                _, kind, ex = SHARED[k % len(SHARED)]
                self.extract(ex, kind, inp, 0, run, False, any_input=True)
        elif what in ("clear", "reload", "close"):  # ["clear" | "reload" | "close", "own" | "shared", slot(, copy)]
            if op[1] == "own":
                if op[2] not in self.own:
                    raise LookupError
                rec = self.own[op[2]]
                net, kind = rec[0], rec[1]
            else:
                net, kind, _ = SHARED[op[2] % len(SHARED)]
            try:
                if what == "clear":
                    net.clear()
                elif what == "reload":
                    load(net, kind, len(op) > 3 and op[3])
                elif op[1] == "own":
                    net.close()
            except Exception as e:
                if op[1] == "own" or type(e).__name__ not in ("RuntimeError", "ValueError"):
                    self.fail("%s of a %s Net raised %s(%r)" % (what, op[1], type(e).__name__, str(e)[:80]))
                if op[1] == "own":
                    rec[2] = False  # loaded halfway, or not at all
                raise
            if op[1] == "own":
                if what == "close":
                    del self.own[op[2]]
                else:
                    rec[2] = what == "reload"
        elif what == "prd":  # ["prd", reader, run]: a Net of its own loaded through a shared reader
            self.prd(op[1], op[2])
        elif what == "prdrewind":
            READERS[op[1] % len(READERS)][0].rewind()
        elif what == "prdclose":  # works, or RuntimeError while another thread's load reads through it
            try:
                READERS[op[1] % len(READERS)][0].close()
            except Exception as e:
                if type(e).__name__ != "RuntimeError":
                    self.fail("close() of a shared reader raised %s(%r)" % (type(e).__name__, str(e)[:80]))
                raise
        elif what == "gc":
            gc.collect()
        elif what == "churn":
            churn()
        elif what == "sleep":
            time.sleep_ms(op[1])


    def prd(self, which, run):
        r, kind, part = READERS[which % len(READERS)]
        net = new_net(kind)
        try:
            try:
                if part == "param":
                    net.load_param(r)
                    net.load_model(ncnn_mp.DataReader(zeros=True))
                else:
                    net.load_model(r)
                with net.create_extractor() as ex:  # what it got may be partial: any Python outcome
                    ex.input("data", new_input(0, 0, 0))
                    ex.extract("out")
                self.count("prd-ok")
            except Exception as e:
                if type(e).__name__ not in ("ValueError", "RuntimeError", "TypeError"):
                    self.fail("a load through a shared reader raised %s(%r)" % (type(e).__name__, str(e)[:80]))
                self.count("prd-" + type(e).__name__)
            try:
                load(net, kind)
            except Exception as e:
                self.fail("a plain load after one through a shared reader raised %s(%r)" % (type(e).__name__, str(e)[:80]))
                raise
            with net.create_extractor() as ex:
                self.extract(ex, kind, 0, 0, run, True)
        finally:
            net.close()


def thread_main(t, seqs, results, report):
    out = open("%s.t%d" % (results, t), "a")
    w = Worker(t, out)
    try:
        w.run(seqs)
    except BaseException as e:  # the thread's own failure: reported, never lost
        w.fails.append("t%d: the thread stopped: %s(%r)" % (t, type(e).__name__, str(e)[:120]))
    out.close()
    setitem_settled(report, t, (w.counts, w.fails))  # (report is the main thread's)
    with LOCK:
        DONE[0] += 1


def main(batch_path, results_path):
    with open(batch_path) as f:
        head = json.loads(f.readline())
        work = [json.loads(line) for line in f if line.strip()]
    TEXTS.extend(t.encode() for t in head["texts"])
    INPUTS.extend(head["inputs"])
    WEIGHTS.extend(head.get("weights", ()))
    out = open(results_path, "w")
    reference()
    n = len(work)
    _thread.stack_size(256 * 1024)  # ncnn's frames under a thread's Python ones
    for p in range(head.get("passes", 1)):
        for kind in head["shared"]:
            net = new_net(kind)
            SHARED.append([net, kind, net.create_extractor()])
        READERS[:] = [[SharedReader(TEXTS[0]), 0, "param"], [SharedReader(weights(3)), 3, "weights"]]
        report = [None] * n
        DONE[0] = 0
        for t in range(n):
            _thread.start_new_thread(thread_main, (t, work[t]["seqs"], results_path, report))
        deadline = time.ticks_add(time.ticks_ms(), head.get("timeout_ms", 120000))
        while True:
            with LOCK:
                if DONE[0] == n:
                    break
            if time.ticks_diff(deadline, time.ticks_ms()) < 0:
                out.write("FAIL main: %d of %d threads did not finish\n" % (n - DONE[0], n))
                out.close()
                sys.exit(3)  # they still run: end the process
            time.sleep_ms(5)
        for t in range(n):
            counts, fails = report[t]
            for why in fails:
                out.write("FAIL %s\n" % why)
            out.write("T %d %s\n" % (t, " ".join("%s:%d" % kv for kv in counts.items())))
        for rec in SHARED:
            try:
                rec[2].close()
                rec[0].close()
            except Exception as e:  # every thread has finished: nothing may be running the net
                out.write("FAIL main: closing a shared Net after pass %d raised %s(%r)\n"
                          % (p + 1, type(e).__name__, str(e)[:80]))
        SHARED.clear()
        for rec in READERS:
            try:
                rec[0].close()
            except Exception as e:  # every thread has finished: nothing may be reading through it
                out.write("FAIL main: closing a shared reader after pass %d raised %s(%r)\n"
                          % (p + 1, type(e).__name__, str(e)[:80]))
        READERS.clear()
        report = rec = net = None
        live = settle()
        if live > STALE_NETS:
            out.write("FAIL main: %d custom layer(s) alive after pass %d\n" % (live, p + 1))
        out.write("P %d %d\n" % (p + 1, gc.mem_alloc() if live <= STALE_NETS else -1))
    out.write("DONE %d\n" % settle())
    out.close()


main(sys.argv[1], sys.argv[2])

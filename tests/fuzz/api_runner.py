# The MicroPython side of the API fuzzer: runs sequences of public calls with the
# arguments tests/fuzz/api_fuzz.py generated from ncnn_mp.pyi, and custom layers whose
# methods raise, return the wrong thing, keep what they were lent, collect garbage or
# call back into ncnn_mp, as each sequence's layer specs say.
#
#   micropython api_runner.py BATCH RESULTS
#
# BATCH: one JSON line {"texts": [...], "passes": n, "verbose": bool}, then one JSON line
# per sequence: {"id": n, "steps": [step, ...]}.
# RESULTS: "S <id>" before a sequence ("s <id> <i>" before each step when verbose),
# "R <id> <outcome>:<count> ..." after it, "FAIL <id> <why>" for what must not happen,
# "P <pass> <bytes>" the heap (settled) after each pass over the batch, then "DONE <live layers>".
import gc
import sys

import ncnn_mp
from binascii import unhexlify

sys.path.append("../mp")
from mptest import STALE_NETS, settle  # noqa: E402

import json  # noqa: E402

POOL = {}    # class name -> objects made so far
KEEP = []    # lent objects custom layers kept past their call
TEXTS = []   # param texts (from the batch header)
CALLS = {}   # layer spec id -> calls so far (for actions on every n-th call)


def put(obj):
    """Pool what a call returned, by its ncnn_mp class."""
    if isinstance(obj, (list, tuple)):
        for o in obj:
            put(o)
        return
    for name in ("Mat", "Net", "Extractor", "Option", "Allocator", "DataReader", "ParamDict", "ModelBin", "Layer"):
        if isinstance(obj, getattr(ncnn_mp, name)):
            POOL.setdefault(name, []).append(obj)
            return


def pick(cls, k):
    objs = POOL.get(cls)
    return objs[k % len(objs)] if objs else None


def val(v):
    """A value from its JSON spec."""
    if isinstance(v, list):
        return [val(x) for x in v]
    if not isinstance(v, dict):
        return v
    t = v["t"]
    if t == "obj":
        return pick(v["c"], v["k"])
    if t == "kept":
        return KEEP[v["k"] % len(KEEP)] if KEEP else None
    if t == "float":
        return float(v["v"])
    if t == "bytes":
        b = unhexlify(v["v"])
        kind = v.get("kind", "bytes")
        return bytearray(b) if kind == "bytearray" else memoryview(bytearray(b)) if kind == "memoryview" else b
    if t == "tuple":
        return tuple(val(x) for x in v["v"])
    if t == "text":
        s = TEXTS[v["k"] % len(TEXTS)]
        return s if v.get("str") else s.encode()
    if t == "const":
        return getattr(getattr(ncnn_mp, v["c"]), v["n"])
    if t == "layer":
        return layer_class(v["b"])
    if t == "creator":
        return creator(v)
    if t == "dr":
        return ncnn_mp.DataReader(zeros=True)
    return None


def args_of(step_args, step_kw):
    return [val(a) for a in step_args], {k: val(x) for k, x in step_kw.items()}


def run_step(s):
    """One step; returns "ok" or the name of the exception it raised."""
    try:
        do(s)
        return "ok"
    except BaseException as e:  # KeyboardInterrupt and SystemExit from layers included
        return type(e).__name__


def do(s):
    op = s[0]
    if op == "new":
        a, kw = args_of(s[2], s[3])
        put(getattr(ncnn_mp, s[1])(*a, **kw))
    elif op == "call":
        obj = pick(s[1], s[2])
        if obj is None:
            raise LookupError  # nothing of that class yet
        a, kw = args_of(s[4], s[5])
        put(getattr(obj, s[3])(*a, **kw))
    elif op == "static":
        a, kw = args_of(s[3], s[4])
        put(getattr(getattr(ncnn_mp, s[1]), s[2])(*a, **kw))
    elif op == "fn":
        a, kw = args_of(s[2], s[3])
        put(getattr(ncnn_mp, s[1])(*a, **kw))
    elif op == "get":
        obj = pick(s[1], s[2])
        if obj is None:
            raise LookupError
        put(getattr(obj, s[3]))
    elif op == "set":
        obj = pick(s[1], s[2])
        if obj is None:
            raise LookupError
        setattr(obj, s[3], val(s[4]))
    elif op == "item":
        obj = pick("Mat", s[1])
        if len(s) > 3:
            obj[val(s[2])] = val(s[3])
        else:
            obj[val(s[2])]
    elif op == "len":
        len(pick("Mat", s[1]))
    elif op == "view":  # memoryview(mat): read one element, maybe write it
        m = memoryview(pick("Mat", s[1]))
        if len(m):
            i = s[2] % len(m)
            x = m[i]
            if s[3]:
                m[i] = x
    elif op == "with":  # the object's with-block around another step
        obj = pick(s[1], s[2])
        if obj is None:
            raise LookupError
        with obj:
            do(s[3])
    elif op == "keptcall":  # a method of a lent object kept past its call: ValueError expected
        if not KEEP:
            raise LookupError
        obj = KEEP[s[1] % len(KEEP)]
        m = getattr(obj, s[2], None)
        if m is None:
            raise LookupError
        m() if callable(m) else None
    elif op == "gc":
        gc.collect()
    elif op == "drop":
        objs = POOL.get(s[1])
        if objs:
            objs.pop(s[2] % len(objs))
    elif op == "unkeep":
        KEEP.clear()


# ---------------------------------------------------------------------------
# Custom layers made from a spec: {"id", "obo", "inpl", "flags", "fwd" (0, 3 or 4), "fwi",
# "init", and per method ("lp", "lm", "cp", "dp", "f", "fi") an action [what, every, extra]}.

def act(self, key, lent):
    """What the spec says the method `key` does on this call, before its normal work.
    True: the method returns (or raises) here and does nothing else."""
    spec = self.spec
    what, every, extra = spec.get(key, ["ok", 1, None])
    n = CALLS.get((spec["id"], key), 0) + 1
    CALLS[(spec["id"], key)] = n
    if what == "ok" or n % every:
        return None
    if what == "raise":
        raise {"ValueError": ValueError, "MemoryError": MemoryError, "KeyboardInterrupt": KeyboardInterrupt,
               "SystemExit": SystemExit, "RuntimeError": RuntimeError}[extra]("fuzz: " + key)
    if what == "ret":
        return ("ret", val(extra))
    if what == "keep":
        KEEP.extend(lent)
    elif what == "gc":
        gc.collect()
    elif what == "usekept":
        for o in KEEP:
            try:
                o.w if isinstance(o, ncnn_mp.Mat) else o.num_threads if isinstance(o, ncnn_mp.Option) else repr(o)
            except ValueError:
                pass
    elif what == "write":  # into a (read-only) bottom
        for o in lent:
            if isinstance(o, ncnn_mp.Mat) and len(o):
                o[0] = 1.0
    elif what == "reenter":  # call back into ncnn_mp from inside ncnn
        do(extra)
    elif what in ("lent", "empty", "count", "notmat"):
        return (what, None)
    return None


def layer_class(spec):
    class Fuzz(ncnn_mp.Layer):
        def __init__(self):
            if spec["init"] == "raise":
                raise ValueError("fuzz: __init__")
            if spec["init"] != "skip":
                super().__init__()
            self.spec = spec
            self.one_blob_only = spec["obo"]
            self.support_inplace = spec["inpl"]
            for k, v in spec["flags"].items():
                setattr(self, k, v)

    def status(self, key, lent):
        r = act(self, key, lent)
        return r[1] if r and r[0] == "ret" else 0

    def load_param(self, pd):
        r = status(self, "lp", [pd])
        pd.get(0, 0)
        return r

    def load_model(self, mb):
        r = status(self, "lm", [mb])
        if spec.get("weights"):
            mb.load(spec["weights"], 1)
        return r

    def create_pipeline(self, opt):
        return status(self, "cp", [opt])

    def destroy_pipeline(self, opt):
        return status(self, "dp", [opt])

    def tops(self, bottom, r):
        """The top Mat(s) for a forward that returns them."""
        src = bottom if self.one_blob_only else bottom[0]
        kind = r[0] if r else "ok"
        if kind == "ret":
            return r[1]
        n = 1 if self.one_blob_only else self.top_count
        if kind == "lent":
            out = [src] * n
        elif kind == "empty":
            out = [ncnn_mp.Mat()] * n
        elif kind == "notmat":
            out = ["not a Mat"] * n
        else:
            out = [src.clone() for _ in range(n + (1 if kind == "count" else 0))]
        return out[0] if self.one_blob_only and len(out) == 1 else tuple(out)

    def forward3(self, bottom, opt):
        lent = [bottom, opt] if self.one_blob_only else list(bottom) + [opt]
        return tops(self, bottom, act(self, "f", lent))

    def forward4(self, bottom, top, opt):
        lent = ([bottom, top, opt] if self.one_blob_only else list(bottom) + list(top) + [opt])
        r = act(self, "f", lent)
        if r and r[0] == "ret":
            return r[1]
        src = bottom if self.one_blob_only else bottom[0]
        for t in [top] if self.one_blob_only else top:
            if not r or r[0] != "empty":
                t.clone_from(src)
        return 0

    def forward_inplace(self, blob, opt):
        r = act(self, "fi", [blob, opt] if self.one_blob_only else list(blob) + [opt])
        return r[1] if r and r[0] == "ret" else 0

    for name, fn in (("load_param", load_param), ("load_model", load_model), ("create_pipeline", create_pipeline),
                     ("destroy_pipeline", destroy_pipeline)):
        if spec.get("def_" + name, True):
            setattr(Fuzz, name, fn)
    if spec["fwd"] == 3:
        Fuzz.forward = forward3
    elif spec["fwd"] == 4:
        Fuzz.forward = forward4
    if spec["fwi"]:
        Fuzz.forward_inplace = forward_inplace
    return Fuzz


def creator(v):
    """What register_custom_layer gets: a class, or a callable that returns odd things."""
    cls = layer_class(v["b"])
    kind = v["kind"]
    if kind == "class":
        return cls
    if kind == "new":
        return lambda: cls()
    if kind == "same":
        one = cls()
        return lambda: one
    if kind == "none":
        return lambda: None
    if kind == "builtin":
        return lambda: ncnn_mp.Layer("ReLU")
    if kind == "raise":
        def fail():
            raise MemoryError("fuzz: creator")
        return fail
    return 42  # not callable


def run_pass(f, out, verbose):
    while True:
        line = f.readline()
        if not line:
            break
        seq = json.loads(line)
        sid = seq["id"]
        out.write("S %d\n" % sid)
        counts = {}
        for i, s in enumerate(seq["steps"]):
            if verbose:
                out.write("s %d %d\n" % (sid, i))
            r = run_step(s)
            counts[r] = counts.get(r, 0) + 1
        POOL.clear()
        KEEP.clear()
        CALLS.clear()
        seq = s = None
        live = settle()
        if live > STALE_NETS:  # a leak adds up over the batch; stale stack words hold a few at most
            out.write("FAIL %d %d custom layer(s) alive after the sequence's objects were dropped\n" % (sid, live))
        out.write("R %d %s\n" % (sid, " ".join("%s:%d" % kv for kv in counts.items())))


def main(batch_path, results_path):
    """Runs the batch `passes` times over, and says what the heap holds after each pass
    ("P <pass> <bytes>"): once tables that only grow have reached their high-water mark,
    the figure must stay put (api_fuzz.HEAP_SLACK)."""
    out = open(results_path, "w")
    with open(batch_path) as f:
        head = json.loads(f.readline())
    TEXTS.extend(head["texts"])
    for n in range(head.get("passes", 1)):
        with open(batch_path) as f:
            f.readline()
            run_pass(f, out, head.get("verbose", False))
        out.write("P %d %d\n" % (n + 1, gc.mem_alloc() if settle() <= STALE_NETS else -1))
    out.write("DONE %d\n" % settle())
    out.close()


main(sys.argv[1], sys.argv[2])

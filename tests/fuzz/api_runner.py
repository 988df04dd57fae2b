# SPDX-License-Identifier: MIT
# The MicroPython side of the API fuzzer: runs sequences of public calls with the
# arguments tests/fuzz/api_fuzz.py generated from ncnn_mp.pyi, and custom layers whose
# methods raise, return the wrong thing, keep what they were lent, collect garbage or
# call back into ncnn_mp, as each sequence's layer specs say.
#
#   micropython api_runner.py BATCH RESULTS    (MICROPYPATH naming tests/mp: fuzzlib sets it)
#
# BATCH: one JSON line {"texts": [...], "passes": n, "verbose": bool}, then one JSON line
# per sequence: {"id": n, "steps": [step, ...]}.
# RESULTS: "S <id>" before a sequence ("s <id> <i>" before each step when verbose),
# "R <id> <outcome>:<count> ..." after it, "FAIL <id> <why>" for what must not happen,
# "P <pass> <bytes>" the heap (settled) after each pass over the batch, then "DONE <live layers>".
#
# Three kinds of steps check what a sequence keeps against what it should still be able to
# do with it (a broken expectation is a "FAIL <id> step <i>: ..." line, the process goes on):
# - "derived": Mats a custom layer made from the Mats ncnn lent it (reshape, batch,
#   flatten, clone, Mat(data=memoryview(lent)), ...), kept past the callback. One that
#   shares a lent Mat's storage must raise ValueError on every use; a clone must work
#   with the values it had; any other must work with its values or raise ValueError.
# - "al": Options with Allocators handed to standalone layers and Mat helpers, then the
#   Option, the Allocator and the objects around the result dropped in any order: the
#   result keeps its values.
# - "buf": Mat(data=bytearray) whose bytearray is then grown: if the storage moved, every
#   use of the Mat (and of a view sharing it) raises ValueError; if not, it sees the buffer.
# - "wip": weights loaded in place (load_model(src, copy=False)) from buffers of every kind:
#   refused with the right exception (writable or unaligned: ValueError; a path or a
#   DataReader: TypeError) and the net untouched, or loaded; then the buffer dropped, the
#   heap collected and reused, the net cleared, reloaded or closed, in any order: every
#   extract gives what a copying load of the same bytes gives, weights_info() counts the
#   load, and the Mats a Python layer kept from its ModelBin keep their values (read-only
#   where they lie in the buffer).
import gc
import struct
import sys

import ncnn_mp
from binascii import unhexlify

try:
    from uctypes import addressof  # where a buffer's storage is: tells a view from a copy
except ImportError:
    addressof = None

# (tests/mp is on MICROPYPATH, which fuzzlib's firmware() sets)
from mptest import STALE_NETS, settle  # noqa: E402

import json  # noqa: E402

POOL = {}    # class name -> objects made so far
KEEP = []    # lent objects custom layers kept past their call
TEXTS = []   # param texts (from the batch header)
CALLS = {}   # layer spec id -> calls so far (for actions on every n-th call)
DERIVED = []  # Kept records: Mats made from lent Mats or from Mat(data=...) Mats (see below)
AENV = {}     # "al" steps: slot name -> object
EXPECT = {}   # "al" steps: result slot -> the floats it must hold
BUFS = {}     # "buf" steps: slot name -> Buf
WIP_NETS = []  # "wip" steps: [param text, weight chunks] per net kind (from the batch header)
WENV = {}     # "wip" steps: slot name -> WipBuf or WipNet
WKEPT = []    # "wip" steps: Kept records of the Mats KW layers kept from their ModelBin
WREFS = {}    # "wip" steps: (net kind, bytes) -> what a copying load of them gives (wip_reference)
FAILS = []    # broken expectations of the running sequence
AT = [0, 0]   # the sequence and step running


def fail(why):
    why = "step %d: %s" % (AT[1], why)
    if len(FAILS) < 20 and why not in FAILS:
        FAILS.append(why)


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
        if kind == "rmemoryview":  # read-only, maybe at an offset that is not 4-byte aligned
            return memoryview(b)[v.get("off", 0):]
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
    if t == "hook":
        return hook(v)
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
    elif op == "derived":
        do_derived()
    elif op == "al":
        do_al(s)
    elif op == "buf":
        do_buf(s)
    elif op == "wip":
        do_wip(s)
    elif op == "r2":
        do_r2(s)
    elif op == "r3":
        do_r3(s)
    elif op == "prd":
        do_prd(s)



# ---------------------------------------------------------------------------
# Kept Mats and what using them must do.

class Kept:
    """A Mat a sequence keeps: how it was made, whether it shares the storage of the Mat
    it came from, and its bytes when it was made."""

    def __init__(self, obj, how, shares, snap, expired, must_work, readonly=False):
        self.obj, self.how, self.shares, self.snap = obj, how, shares, snap
        self.expired = expired      # () -> True once the storage it shares is gone
        self.must_work = must_work  # a copy (clone) that must stay usable
        self.readonly = readonly    # over immutable bytes (weights in place): every write raises ValueError


def floats(b):
    return struct.unpack("<%df" % (len(b) // 4), b)


def relu(xs):
    return [x if x > 0 else 0.0 for x in xs]


def close_to(a, b):
    return len(a) == len(b) and all(x == y or abs(x - y) <= 1e-5 * (1 + abs(y)) for x, y in zip(a, b))


def plain(m):
    """Float32 with one element per position: its bytes are its values in order."""
    return m.elemsize == 4 and m.elempack == 1


def span(m):
    """(first byte, bytes) of a Mat's storage, or None (no uctypes, empty, expired)."""
    try:
        return addressof(m), len(memoryview(m)) * (4 if m.elemsize == 4 * m.elempack else 1)
    except Exception:
        return None


def region_of(buf):
    """(first byte, bytes) of any buffer's storage (a Mat's: span), or None."""
    if isinstance(buf, ncnn_mp.Mat):
        return span(buf)
    try:
        return addressof(buf), len(bytes(buf))  # (a memoryview of a Mat counts floats)
    except Exception:
        return None


def inside(m, region):
    """m's storage starts inside region (first, bytes): m is a view, not a copy."""
    s = span(m)
    return s is not None and region is not None and region[1] > 0 and region[0] <= s[0] < region[0] + region[1]


RELU_NET = []


def relu_net():
    """Input -> ReLU: what a kept Mat is fed to as an Extractor input."""
    if not RELU_NET:
        n = ncnn_mp.Net()
        n.load_param(b"7767517\n2 2\nInput data 0 1 data\nReLU r 1 1 data out\n")
        n.load_model(ncnn_mp.DataReader(zeros=True))
        RELU_NET.append(n)
    return RELU_NET[0]


def extract_relu(m):
    ex = relu_net().create_extractor()
    try:
        ex.input("data", m)
        return ex.extract("out").to_bytes()
    finally:
        ex.close()


def make_derived(how, m, opt):
    """A Mat made from m inside a custom layer's call (m lent by ncnn)."""
    total = m.w * m.h * m.d * m.c
    if how == "reshape":
        return m.reshape(total)
    if how == "reshape2":
        return m.reshape(m.w, total // m.w)
    if how == "batch":
        return m.batch(0)
    if how == "flatten":
        return m.flatten(opt)
    if how == "packing":
        return m.convert_packing(1, opt)
    if how == "border0":
        return m.copy_make_border(0, 0, 0, 0, ncnn_mp.Mat.BORDER_CONSTANT, 0.0, opt)
    if how == "border1":
        return m.copy_make_border(1, 0, 1, 1, ncnn_mp.Mat.BORDER_CONSTANT, 2.5, opt)
    if how == "cut0":
        return m.copy_cut_border(0, 0, 0, 0, opt)
    if how == "cut1":
        return m.copy_cut_border(0, 0, 1, 0, opt)
    if how == "clone":
        return m.clone()
    if how == "relu":
        return ncnn_mp.Layer("ReLU").forward(m, opt)
    if how == "flatten_layer":
        return ncnn_mp.Layer("Flatten").forward(m, opt)
    if how == "mv":  # a Mat over a memoryview of the lent Mat
        n = len(memoryview(m)) if plain(m) else 0
        return ncnn_mp.Mat(n - n % 4, data=memoryview(m))
    if how == "data":  # a Mat over the lent Mat itself as the buffer
        n = len(memoryview(m)) if plain(m) else 0
        return ncnn_mp.Mat(n - n % 4, data=m)
    raise LookupError(how)


def check_made(how, m, r):
    """Inside the callback, right after r = <how>(m): r's values are m's (as far as they are known)."""
    if not (plain(m) and plain(r)):
        return
    src, got = m.to_bytes(), r.to_bytes()
    if how in ("reshape", "reshape2", "flatten", "packing", "border0", "cut0", "clone", "flatten_layer"):
        ok = got == src
    elif how == "relu":
        ok = close_to(floats(got), relu(floats(src)))
    elif how in ("mv", "data"):  # a 1-D Mat over the raw storage, channel padding included
        ok = got == bytes(memoryview(m))[:len(got)]
    else:
        return
    if not ok:
        fail("%s of a lent Mat, inside the callback: values differ from the lent Mat's" % how)


def derive(lent, extra):
    """The "derive" action: every Mat-returning method on each lent Mat; the results kept."""
    lent_opt = None
    for o in lent:
        if isinstance(o, ncnn_mp.Option):
            lent_opt = o
    for m in lent:
        if not isinstance(m, ncnn_mp.Mat):
            continue
        try:
            if m.dims == 0:
                continue
            region = span(m)
        except ValueError:
            continue
        for how, which in extra:
            opt = lent_opt if which == "lent" and lent_opt is not None else ncnn_mp.Option()
            try:
                r = make_derived(how, m, opt)
                snap = r.to_bytes()
                check_made(how, m, r)
            except Exception:  # refused inside the callback: fine, nothing kept
                continue
            # A view shares storage ncnn takes back when the callback returns.
            shares = inside(r, region) if addressof else how in ("reshape", "reshape2", "batch", "mv", "data")
            DERIVED.append(Kept(r, how, shares, snap, lambda: True, how == "clone"))


def uses(m, snap):
    """(name, use): every way to use a kept Mat; a use returns what to compare (or None).
    Reads first, then writes (which put the bytes back)."""
    opt = ncnn_mp.Option
    out = [
        ("attrs", lambda: (m.dims, m.w, m.h, m.d, m.c, m.elemsize, m.elempack, m.cstep, m.n, m.nstep) and None),
        ("len", lambda: len(m) and None),
        ("[0]", lambda: ("first", m[0])),
        ("[-1]", lambda: m[-1] and None),
        ("to_bytes", lambda: ("bytes", m.to_bytes())),
        ("memoryview", lambda: len(memoryview(m)) and None),
        ("Mat(data=memoryview)", lambda: ncnn_mp.Mat(4, data=memoryview(m)) and None),
        ("Mat(data=mat)", lambda: ncnn_mp.Mat(4, data=m) and None),
        ("clone", lambda: ("bytes", m.clone().to_bytes())),
        ("reshape", lambda: m.reshape(m.w * m.h * m.d * m.c) and None),
        ("batch(0)", lambda: m.batch(0) and None),
        ("flatten", lambda: m.flatten(opt()) and None),
        ("convert_packing", lambda: m.convert_packing(1, opt()) and None),
        ("copy_make_border", lambda: m.copy_make_border(1, 1, 1, 1, ncnn_mp.Mat.BORDER_CONSTANT, 0.0, opt()) and None),
        ("copy_cut_border", lambda: m.copy_cut_border(0, 0, 0, 0, opt()) and None),
        ("Layer.forward", lambda: ("relu", ncnn_mp.Layer("ReLU").forward(m, opt()).to_bytes())),
        ("Extractor.input", lambda: ("relu", extract_relu(m))),
        ("fill", lambda: m.fill(1.5) or ("filled", m.to_bytes())),
        ("[0]=", lambda: set0(m) or ("set0", m[0])),
    ]
    if snap is not None:  # (puts back the bytes it had)
        out.append(("from_bytes", lambda: m.from_bytes(snap) or ("bytes", m.to_bytes())))
    return out


def set0(m):
    m[0] = 2.0


WRITES = ("fill", "[0]=", "from_bytes")  # the uses that write into the Mat


def right(kind, got, snap):
    """Whether a use's result agrees with the bytes the Mat had."""
    if snap is None or len(snap) % 4:
        return True
    xs = floats(snap)
    if kind == "bytes":
        return got == snap
    if kind == "first":
        return not xs or close_to([got], [xs[0]])
    if kind == "relu":
        return close_to(floats(got), relu(xs))
    if kind == "filled":
        return all(x == 1.5 for x in floats(got))
    if kind == "set0":
        return got == 2.0
    return True


def use_kept(k, what):
    """Every use of a kept Mat, judged: an expired view raises ValueError on each (TypeError
    too where MicroPython itself asks for the buffer); anything else works with its values,
    or (not a clone) raises ValueError."""
    m = k.obj
    expired = k.shares and k.expired()
    comparable = k.snap is not None and plain_or_none(m, k)
    bad = {}  # verdict -> the uses that got it
    for name, use in uses(m, k.snap):
        try:
            r = use()
        except Exception as e:
            t = type(e).__name__
            if k.readonly and name in WRITES and t == "ValueError":
                continue
            if expired:
                # memoryview() and Mat(data=) ask for the buffer through MicroPython, which says TypeError
                if not (t == "ValueError" or (t == "TypeError" and (name == "memoryview" or "data" in name))):
                    bad.setdefault("raised %s, not ValueError" % t, []).append(name)
            elif k.must_work or t != "ValueError":
                bad.setdefault("raised %s (%s)" % (t, str(e)[:80]), []).append(name)
            continue
        if expired:
            bad.setdefault("worked (ValueError expected)", []).append(name)
        elif k.readonly and name in WRITES:
            bad.setdefault("wrote into a read-only Mat (ValueError expected)", []).append(name)
        elif r is not None and comparable and not right(r[0], r[1], k.snap):
            bad.setdefault("gave wrong values (storage freed or reused?)", []).append(name)
    state = "a view of storage that is gone" if expired else "a copy" if k.must_work else "not sharing the storage"
    for verdict, names in bad.items():
        fail("%s %s (%s): %s: %s" % (what, k.how, state, verdict, ", ".join(names)))


def plain_or_none(m, k):
    try:
        return plain(m)
    except Exception:
        return False


def do_derived():
    """Use every kept derived Mat (after the callbacks that made them returned)."""
    for k in DERIVED:
        use_kept(k, "kept")


# ---------------------------------------------------------------------------
# Options with Allocators on standalone layers ("al" steps).

def values(shape, seed):
    n = 1
    for x in shape:
        n *= x
    return [float((i * 7 + seed) % 11 - 5) + 0.25 for i in range(n)]


def new_mat(shape, xs, allocator=None):
    m = ncnn_mp.Mat(*shape, allocator=allocator) if len(shape) != 3 else \
        ncnn_mp.Mat(shape[0], shape[1], shape[2], allocator=allocator)
    m.from_bytes(struct.pack("<%df" % len(xs), *xs))
    return m


def unpack(m):
    """A Mat's values in order (packed Mats unpacked first)."""
    if m.elempack != 1:
        m = m.convert_packing(1, ncnn_mp.Option())
    return list(floats(m.to_bytes()))


def bordered(shape, xs, v):
    """copy_make_border(1, 1, 1, 1, BORDER_CONSTANT, v) of a Mat of that shape (1-D: left/right only)."""
    w = shape[0]
    if len(shape) == 1:
        return [v] + xs + [v]
    h = shape[1]
    planes = len(xs) // (w * h)
    out = []
    for p in range(planes):
        out += [v] * (w + 2)
        for y in range(h):
            out += [v] + xs[(p * h + y) * w:(p * h + y + 1) * w] + [v]
        out += [v] * (w + 2)
    return out


def al_make(kind, x, opt, a):
    """A result made with opt (whose allocators are Allocators) or with a directly, and its expected values.
    Returns (result, expected, objects to keep in slots)."""
    xs = unpack(x)
    shape = [x.w] + ([x.h] if x.dims >= 2 else []) + ([x.d] if x.dims == 4 else []) + ([x.c] if x.dims >= 3 else [])
    if kind == "relu":
        layer = ncnn_mp.Layer("ReLU")
        return layer.forward(x, opt), relu(xs), layer
    if kind == "relu_inplace":
        layer = ncnn_mp.Layer("ReLU")
        y = x.clone(a)
        layer.forward_inplace(y, opt)
        return y, relu(xs), layer
    if kind == "sigmoid":
        layer = ncnn_mp.Layer("Sigmoid")
        r = layer.forward(x, opt)
        import math
        return r, [1 / (1 + math.exp(-v)) for v in xs], layer
    if kind == "concat":
        layer = ncnn_mp.Layer("Concat")
        return layer.forward([x, x], 1, opt)[0], xs + xs, layer
    if kind == "flatten":
        return x.flatten(opt), xs, None
    if kind == "packing":
        return x.convert_packing(4, opt), xs, None
    if kind == "border":
        return x.copy_make_border(1, 1, 1, 1, ncnn_mp.Mat.BORDER_CONSTANT, 3.5, opt), bordered(shape, xs, 3.5), None
    if kind == "clone":
        return x.clone(a), xs, None
    if kind == "reshape":
        return x.reshape(len(xs), a), xs, None
    if kind == "mat":
        return new_mat(shape, xs, a), xs, None
    raise LookupError(kind)


def slot(name):
    if name not in AENV:
        raise LookupError(name)  # dropped earlier in the sequence, or never made
    return AENV[name]


def do_al(s):
    op = s[1]
    if op == "alloc":
        AENV[s[2]] = ncnn_mp.Allocator(unlocked=s[3])
    elif op == "opt":
        AENV[s[2]] = ncnn_mp.Option()
    elif op == "set":  # ["al", "set", option, "blob" | "workspace", allocator or None]
        getattr(slot(s[2]), "set_%s_allocator" % s[3])(slot(s[4]) if s[4] else None)
    elif op == "x":
        AENV[s[2]] = new_mat(s[3], values(s[3], s[4]))
    elif op == "make":  # ["al", "make", result, kind, x, option, allocator]
        x, opt, a = slot(s[4]), slot(s[5]), AENV.get(s[6])
        try:
            r, expected, layer = al_make(s[3], x, opt, a)
        except Exception as e:
            if a is None or isinstance(e, LookupError):
                raise
            fail("al %s with an Allocator raised %s: %s" % (s[3], type(e).__name__, e))
            raise
        got = unpack(r)
        if not close_to(got, expected):
            fail("al %s: wrong values when made" % s[3])
        AENV[s[2]], EXPECT[s[2]] = r, expected
        if layer is not None:
            AENV["L" + s[2]] = layer
    elif op == "net":  # ["al", "net", net, allocator]: a ReLU net whose option uses the Allocator
        n = ncnn_mp.Net()
        n.opt.set_blob_allocator(slot(s[3]))
        n.opt.set_workspace_allocator(slot(s[3]))
        n.load_param(b"7767517\n2 2\nInput data 0 1 data\nReLU r 1 1 data out\n")
        n.load_model(ncnn_mp.DataReader(zeros=True))
        AENV[s[2]] = n
    elif op == "extract":  # ["al", "extract", result, net, x, option or None]
        ex = slot(s[3]).create_extractor()
        if s[5]:
            ex.set_option(slot(s[5]))
        x = slot(s[4])
        ex.input("data", x)
        AENV[s[2]], EXPECT[s[2]] = ex.extract("out"), relu(unpack(x))
        AENV["E" + s[2]] = ex
    elif op == "close":
        slot(s[2]).close()
    elif op == "del":
        AENV.pop(s[2], None)
    elif op == "check":  # the result still holds the values it was made with
        r = slot(s[2])
        try:
            got = unpack(r)
        except Exception as e:
            fail("al result %s: unusable (%s: %s)" % (s[2], type(e).__name__, e))
            raise
        if not close_to(got, EXPECT[s[2]]):
            fail("al result %s: wrong values (its storage was freed or reused)" % s[2])


# ---------------------------------------------------------------------------
# Buffers resized under Mats ("buf" steps).

class Buf:
    def __init__(self, b, m, shape):
        self.b, self.m, self.shape = b, m, shape
        self.at = addressof(b) if addressof else None  # where the storage was when the Mat was made
        self.nbytes = len(b) * (1 if isinstance(b, bytearray) else 4)
        self.ex = None
        self.extracted = False  # self.ex extracted once already

    def moved(self):
        return self.at is not None and addressof(self.b) != self.at

    def packed(self):
        """The Mat's elements as the buffer holds them now (channel padding left out)."""
        shape, raw = self.shape, bytes(self.b)
        w, h = shape[0], shape[1] if len(shape) > 1 else 1
        d = shape[2] if len(shape) == 4 else 1
        c = shape[-1] if len(shape) >= 3 else 1
        plane = w * h * d
        cstep = plane if len(shape) <= 2 else (plane * 4 + 15) // 16 * 4
        return b"".join(raw[ch * cstep * 4:(ch * cstep + plane) * 4] for ch in range(c))


def buf_need(shape):
    w, h = shape[0], shape[1] if len(shape) > 1 else 1
    d = shape[2] if len(shape) == 4 else 1
    c = shape[-1] if len(shape) >= 3 else 1
    return (w * h * d if len(shape) <= 2 else (w * h * d * 4 + 15) // 16 * 4) * c * 4


def do_buf(s):
    op = s[1]
    if op == "new":  # ["buf", "new", slot, shape, seed, extra bytes, "bytearray" | "array"]
        shape, n = s[3], buf_need(s[3]) + s[5]
        if s[6] == "array":
            from array import array
            b = array("f", [float((i * 5 + s[4]) % 9 - 4) for i in range(n // 4)])
        else:
            b = bytearray(struct.pack("<%df" % (n // 4), *[float((i * 5 + s[4]) % 9 - 4) for i in range(n // 4)]))
        m = ncnn_mp.Mat(*shape, data=b) if len(shape) != 3 else ncnn_mp.Mat(shape[0], shape[1], shape[2], data=b)
        BUFS[s[2]] = Buf(b, m, shape)
        return
    buf = BUFS.get(s[2])
    if buf is None:
        raise LookupError
    if op == "input":  # an Extractor given the Mat now, extracted later
        buf.ex = relu_net().create_extractor()
        buf.ex.input("data", buf.m)
    elif op == "view":  # ["buf", "view", slot, how]: a Mat sharing (or copying) the buffer's storage
        m, how = buf.m, s[3]
        if how == "extract":
            ex = relu_net().create_extractor()
            ex.input("data", m)
            r = ex.extract("out")
        else:
            r = make_derived(how, m, ncnn_mp.Option())
        region = (buf.at, buf.nbytes) if buf.at is not None else None
        raw = how in ("mv", "data")  # over the raw storage by construction, channel padding included
        shares = raw or (inside(r, region) if addressof else how in ("reshape", "reshape2", "batch"))
        # What may share the buffer sees the writes "use" makes through the buffer's Mat (fill,
        # then from_bytes of the packed bytes, which leaves the channel padding filled): only
        # the copies' values are compared; every view's lifetime is.
        copy = how in ("clone", "extract")
        DERIVED.append(Kept(r, "%s of a Mat(data=%s)" % (how, type(buf.b).__name__), shares,
                            r.to_bytes() if copy else None, buf.moved, how == "clone"))
    elif op == "grow":  # ["buf", "grow", slot, how, n]
        b, n, how = buf.b, s[4], s[3]
        more = bytes(n) if isinstance(b, bytearray) else [0.0] * (n // 4 + 1)
        if how == "extend":
            b.extend(more)
        elif how == "slice" and isinstance(b, bytearray):
            b[len(b):] = more
        else:
            b += more if isinstance(b, bytearray) else type(b)("f", more)
    elif op == "use":  # every use of the Mat over the buffer
        use_buf(buf)


def use_buf(buf):
    m, moved = buf.m, buf.moved()
    what = "Mat(data=%s) after the buffer %s" % (type(buf.b).__name__, "moved" if moved else "grew in place")
    k = Kept(m, "", True, None, lambda: moved, False)
    if moved:
        use_kept(k, what)
    else:
        k.shares = False
        k.snap = buf.packed()
        k.must_work = True
        use_kept(k, what)
        if m.to_bytes() != buf.packed():
            fail("%s: the Mat does not see the buffer's bytes" % what)
    if buf.ex is not None:  # input() given before the buffer grew
        try:
            got = buf.ex.extract("out").to_bytes()
        except Exception as e:
            if not moved or type(e).__name__ != "ValueError":
                fail("%s: extract of an earlier input raised %s: %s" % (what, type(e).__name__, e))
            return
        if moved:
            fail("%s: extract of an earlier input worked (ValueError expected)" % what)
        elif not buf.extracted and not close_to(floats(got), relu(floats(buf.packed()))):
            # (An Extractor hands back what it computed the first time: only that is compared.)
            fail("%s: extract of an earlier input gave wrong values" % what)
        buf.extracted = True


# ---------------------------------------------------------------------------
# Weights in place ("wip" steps).
#
# A net kind is a param text and the chunks of weights its layers read, in order: ["raw", n]
# (n floats, ModelBin type 1) or ["tag", n] (type 0: a 4-byte tag, then n floats, fp32, or n
# halves, fp16, which ncnn converts). KW, the runner's Python layer, keeps the Mat its
# ModelBin hands out and multiplies by it at every forward; the built-in MemoryData and Bias
# read their weights at every forward too. So a net whose buffer was freed and reused
# computes with other bytes: its extract differs from the reference, a copying load of the
# same bytes (wip_reference).

# Buffer kinds: what load_model(copy=False) must accept, and what it must refuse, with which
# exception. (A Mat is refused even over bytes: create() could give it new storage.)
WIP_ACCEPTED = ("bytes", "mv")
WIP_REFUSED = {"bytearray": "ValueError", "mvba": "ValueError", "matrw": "ValueError", "mvu": "ValueError",
               "mat": "ValueError", "matv": "ValueError", "str": "TypeError", "dr": "TypeError"}
WIP_INPUT = [((i * 3) % 7 - 3) * 0.5 for i in range(16)]
WLOAD = [None]  # the running load: (copy, the buffer, a list for its Kept records), for KW.load_model


class KW(ncnn_mp.Layer):
    """Keeps the Mat its ModelBin hands out (in place: over the buffer, read-only, keeping it
    alive) and multiplies its input by it, element i by weight i % count."""

    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def load_param(self, pd):
        self.count, self.type = pd.get(0, 0), pd.get(1, 1)

    def load_model(self, mb):
        self.w = mb.load(self.count, self.type)
        if WLOAD[0] is None:  # (a reference load)
            return
        copy, buf, made = WLOAD[0]
        # In place, ncnn lends raw and fp32 data where it lies (fp16 it converts into a Mat of its
        # own): a Mat whose storage lies in the buffer must be read-only, any other writable.
        readonly = not copy and inside(self.w, region_of(buf))
        k = Kept(self.w, "a Mat KW kept from its ModelBin (%s)" % ("copied" if copy else "in place"),
                 False, self.w.to_bytes(), lambda: False, True, readonly)
        WKEPT.append(k)
        made.append(k)

    def forward(self, bottom, opt):
        top = bottom.clone()
        v, w, n = memoryview(top), self.w, self.count
        for i in range(len(v)):
            v[i] = v[i] * w[i % n]
        return top


def wip_weights(kind, seed, tags):
    """The .bin of net kind `kind`: its chunks' weights made from seed; tags: fp32 or fp16, per tagged chunk."""
    out, t, j = [], 0, seed
    for what, n in WIP_NETS[kind][1]:
        xs = []
        for _ in range(n):
            j += 1
            xs.append(((j * 7) % 13 - 6) * 0.25 + 0.125)
        if what == "raw":
            out.append(struct.pack("<%df" % n, *xs))
            continue
        tag, t = tags[t % len(tags)] if tags else "fp32", t + 1
        if tag == "fp16":
            data = struct.pack("<%de" % n, *xs)
            out.append(struct.pack("<I", 0x01306B47) + data + bytes(-len(data) % 4))
        else:
            out.append(bytes(4) + struct.pack("<%df" % n, *xs))
    return b"".join(out)


def wip_counts(kind, tags, length, copy):
    """weights_info() after a load that worked of a .bin made by wip_weights (length bytes long)."""
    lent = converted = consumed = 0
    t = 0
    for what, n in WIP_NETS[kind][1]:
        if what == "raw":
            lent, consumed = lent + 4 * n, consumed + 4 * n
            continue
        tag, t = tags[t % len(tags)] if tags else "fp32", t + 1
        size = (2 * n + 3) // 4 * 4 if tag == "fp16" else 4 * n
        consumed += 4 + size
        if tag == "fp16":
            converted += size
        else:
            lent += size
    if copy:
        return {"in_place": 0, "copied": consumed, "converted": 0, "unused": length - consumed}
    return {"in_place": lent, "copied": 0, "converted": converted, "unused": length - consumed}


def wip_net(kind):
    n = ncnn_mp.Net()
    n.opt.num_threads = 1
    n.register_custom_layer("KW", KW)
    n.load_param(WIP_NETS[kind][0].encode())
    return n


def wip_input():
    m = ncnn_mp.Mat(16)
    v = memoryview(m)
    for i, x in enumerate(WIP_INPUT):
        v[i] = x
    return m


def wip_extract(net):
    with net.create_extractor() as ex:
        ex.input("data", wip_input())
        return ex.extract("out").to_bytes()


def wip_reference(kind, data):
    """(outcome, output bytes, weights_info) of a copying load of `data` into a net of `kind`:
    what a load in place of the same bytes must give."""
    key = (kind, data)
    if key not in WREFS:
        n = wip_net(kind)
        WLOAD[0] = None
        try:
            n.load_model(data)
            WREFS[key] = ("ok", wip_extract(n), n.weights_info())
        except Exception as e:
            WREFS[key] = (type(e).__name__, None, None)
        n.close()
    return WREFS[key]


class WipBuf:
    """A weights buffer of one kind, and the bytes a load sees in it."""

    def __init__(self, obj, kind, net_kind, tags, seen, whole):
        self.obj, self.kind, self.net_kind, self.tags, self.seen = obj, kind, net_kind, tags, seen
        self.whole = whole  # made for its net kind, nothing cut: the layout, and so the counts, are known
        self.kept = []      # the Kept records of Mats KW layers kept from loads of it


class WipNet:
    """A net of a kind, and what it must do now: state "empty" (no param), "params" (no
    weights), "ready" (then ref: its output's bytes, info: weights_info()) or "closed".
    loose: its extract may raise ValueError (never give other values): the Mats its KW layer
    computes with expired, as the Mat they lie over did (given new storage, released, lent)."""

    def __init__(self, net, kind):
        self.net, self.kind, self.state, self.ref, self.info, self.exact = net, kind, "params", None, None, False
        self.src, self.loose = None, False  # src: the WipBuf of its last load in place


def loosen(kept, nets):
    """Mats over a Mat that expired, and nets that compute with them: ValueError allowed."""
    for k in kept:
        k.must_work = False
    for rec in nets:
        rec.loose = True


def wip_buffer(kind, data):
    """data in a buffer of `kind` (see WIP_ACCEPTED, WIP_REFUSED); (object, the bytes a load sees)."""
    if kind == "bytes":
        return bytes(bytearray(data)), data
    if kind in ("mv", "mvu"):  # a slice of a larger bytes object: 4 or 8 bytes in, or 1 to 3
        pad = 4 + len(data) % 5 if kind == "mv" else 1 + len(data) % 3
        pad -= pad % 4 if kind == "mv" else 0
        whole = b"\xa5" * pad + data + b"\x5a" * 8
        return memoryview(whole)[pad:pad + len(data)], data
    if kind == "bytearray":
        return bytearray(data), data
    if kind == "mvba":
        return memoryview(bytearray(data)), data
    if kind in ("mat", "matv", "matrw"):  # a 1-D Mat holds whole 16-byte rows: zeros after the data
        seen = data + bytes(-len(data) % 16)
        w = len(seen) // 4
        if kind == "matrw":
            m = ncnn_mp.Mat(w)
            m.from_bytes(seen)
            return m, seen
        m = ncnn_mp.Mat(w, data=bytes(bytearray(seen)))
        return (m.reshape(4, w // 4) if kind == "matv" and w else m), seen
    if kind == "dr":
        return ncnn_mp.DataReader(from_memory=data), data
    return "api_runner.py", data  # "str": a file that is there, read as weights if it were allowed


def wip_slot(name, cls):
    obj = WENV.get(name)
    if not isinstance(obj, cls):
        raise LookupError(name)  # dropped earlier, or never made
    return obj


def wip_load(rec, buf, copy):
    """rec.net.load_model(buf, copy=copy), judged: the exception it must raise, or the state it leaves."""
    kind = buf.kind
    refused = None if copy else WIP_REFUSED.get(kind)
    if rec.state == "closed":
        expect = "ValueError"
    elif refused:
        expect = refused
    else:
        ref = wip_reference(rec.kind, buf.seen)
        expect = "ValueError" if rec.state == "empty" else ref[0]
    WLOAD[0] = (copy, buf.obj, buf.kept)
    try:
        rec.net.load_model(buf.obj, copy=copy)
        got = "ok"
    except Exception as e:
        got = type(e).__name__
    finally:
        WLOAD[0] = None
    what = "load_model(%s, copy=%s) into a %s net" % (kind, copy, rec.state)
    if got != expect:
        fail("wip %s: %s, not %s" % (what, got, expect))
    if rec.state == "closed" or refused:
        return  # untouched: the net answers as before
    if got != "ok":
        rec.state = "empty" if rec.state == "empty" else "params"
        return
    rec.state, rec.ref, rec.info, rec.loose = "ready", ref[1], ref[2], False
    rec.src = None if copy else buf
    rec.exact = buf.whole and buf.net_kind == rec.kind and not copy  # the layout is known: the counts are too
    if rec.exact:
        rec.info = wip_counts(rec.kind, buf.tags, len(buf.seen), False)


def wip_check_info(rec):
    """weights_info(): the last load's counts when ready, else ValueError."""
    try:
        info = rec.net.weights_info()
    except Exception as e:
        if rec.state == "ready" or type(e).__name__ != "ValueError":
            fail("wip weights_info() of a %s net raised %s: %s" % (rec.state, type(e).__name__, e))
        return
    if rec.state != "ready":
        fail("wip weights_info() of a %s net worked (ValueError expected)" % rec.state)
        return
    keys = ("in_place", "copied", "converted", "unused")
    got = {k: info.get(k) for k in keys}
    want = {k: rec.info.get(k) for k in keys}
    if rec.exact or want["in_place"] == 0 and got["in_place"] == 0:
        ok = got == want  # copying, or in place with a known layout
    else:  # in place, another kind's buffer: the same bytes consumed, tags (4 bytes each) aside
        tags = want["copied"] - got["in_place"] - got["converted"]
        ok = got["unused"] == want["unused"] and got["copied"] == 0 and tags >= 0 and tags % 4 == 0
    if not ok:
        fail("wip weights_info() %r, expected %r" % (got, want))


def wip_check_run(rec):
    """An extract: the reference's bytes when ready, else ValueError."""
    try:
        got = wip_extract(rec.net)
    except Exception as e:
        if rec.state == "ready" and not (rec.loose and type(e).__name__ == "ValueError") \
                or type(e).__name__ != "ValueError":
            fail("wip extract of a %s net raised %s: %s" % (rec.state, type(e).__name__, e))
        return
    if rec.state != "ready":
        fail("wip extract of a %s net worked (ValueError expected)" % rec.state)
    elif got != rec.ref:
        fail("wip extract: wrong values (%s against a copying load's %s): the weights' memory was freed or reused"
             % (list(floats(got))[:3], list(floats(rec.ref))[:3]))


def wip_churn():
    """Collect, then fill what was freed: Python heap (bytes) and C heap (ncnn Mats) both."""
    gc.collect()
    junk = [b"\x7f" * n for n in (64, 68, 128, 132, 144, 256, 512, 1024) for _ in range(3)]
    for n in (16, 17, 32, 40, 64, 128, 256):
        for _ in range(3):
            m = ncnn_mp.Mat(n)
            m.fill(1e30)
            junk.append(m)
    return junk


class KWL(ncnn_mp.Layer):
    """The attack on a lent Mat: loads a victim net in place from the bottom ncnn lends it
    (or a memoryview of it), whose storage ncnn takes back after the forward."""

    victim = None  # [WipNet, "mat" | "mv", outcome, bytes seen, Kept records of its KW]

    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, opt):
        att = KWL.victim
        att[3] = bytes(memoryview(bottom))
        src = bottom if att[1] == "mat" else memoryview(bottom)
        WLOAD[0] = (False, src, att[4])
        try:
            att[0].net.load_model(src, copy=False)
            att[2] = "ok"
        except Exception as e:
            att[2] = type(e).__name__
        WLOAD[0] = src = None
        return bottom.clone()


def wip_attack(rec, how, close):
    """A Python layer of another net loads rec's net in place from its lent bottom. Refused
    (ValueError), or the net keeps what it points into: later extracts are right."""
    ref = wip_weights(rec.kind, 5, ["fp32"])
    n = len(ref) // 4
    loader = ncnn_mp.Net()
    loader.register_custom_layer("KWL", KWL)
    loader.load_param(b"7767517\n3 3\nInput data 0 1 data\nAbsVal a 1 1 data x\nKWL l 1 1 x out\n")
    loader.load_model(ncnn_mp.DataReader(zeros=True))
    x = ncnn_mp.Mat(n)
    x.from_bytes(ref)
    KWL.victim = att = [rec, how, None, None, []]
    try:
        with loader.create_extractor() as ex:
            ex.input("data", x)
            ex.extract("out")
    finally:
        KWL.victim = None
    if close:
        loader.close()
    loader = x = None
    if att[2] not in ("ok", "ValueError"):
        fail("wip load_model(copy=False) of a lent Mat (%s) raised %s" % (how, att[2]))
    if att[2] != "ok":
        rec.state = "params" if rec.state == "ready" else rec.state
        return
    r = wip_reference(rec.kind, att[3])
    rec.state, rec.ref, rec.info, rec.exact = ("ready", r[1], r[2], False) if r[0] == "ok" else ("params", None, None, False)
    rec.src = None
    # KW's Mat over the lent Mat is lent too, and expires with the forward: the net may raise
    # ValueError from then on. Whatever else points into the lent storage must not see it go.
    loosen(att[4], [rec])


def do_wip(s):
    op = s[1]
    if op == "net":  # ["wip", "net", slot, kind]
        WENV[s[2]] = WipNet(wip_net(s[3]), s[3])
    elif op == "buf":  # ["wip", "buf", slot, net kind, seed, buffer kind, bytes cut, bytes added, tags]
        WENV.pop(s[2], None)  # (a buffer that cannot be made leaves no older one in the slot)
        data = wip_weights(s[3], s[4], s[8])
        data = data[:max(0, len(data) - s[6])] + bytes(range(s[7]))
        obj, seen = wip_buffer(s[5], data)
        WENV[s[2]] = WipBuf(obj, s[5], s[3], s[8], seen, s[6] == 0)
    elif op == "load":  # ["wip", "load", net, buffer, copy]
        wip_load(wip_slot(s[2], WipNet), wip_slot(s[3], WipBuf), s[4])
    elif op == "info":
        wip_check_info(wip_slot(s[2], WipNet))
    elif op == "run":
        wip_check_run(wip_slot(s[2], WipNet))
    elif op == "kept":  # the Mats KW layers kept: their values, read-only where in place
        for k in WKEPT:
            use_kept(k, "wip")
    elif op == "churn":
        wip_churn()
    elif op == "drop":  # the slot only: a net still holds what it loaded in place
        WENV.pop(s[2], None)
    elif op == "clear":
        rec = wip_slot(s[2], WipNet)
        rec.net.clear()
        rec.state = "empty"
    elif op == "param":
        rec = wip_slot(s[2], WipNet)
        rec.net.load_param(WIP_NETS[rec.kind][0].encode())
        rec.state = "params"
    elif op == "close":
        rec = wip_slot(s[2], WipNet)
        rec.net.close()
        rec.state = "closed"
    elif op == "matop":  # ["wip", "matop", buffer, what]: what the Mat a net may point into can still do
        buf = wip_slot(s[2], WipBuf)
        m = buf.obj
        if not isinstance(m, ncnn_mp.Mat):
            raise LookupError
        if s[3] == "fill":
            m.fill(0.0)
            return
        # New storage (allowed on a read-only Mat), or none: the old must live on for the nets
        # that point into it. KW's Mats over the Mat expire with it (ValueError, never other values).
        loosen(buf.kept, [r for r in WENV.values() if isinstance(r, WipNet) and r.src is buf])
        WENV.pop(s[2])  # no longer the buffer a load would see: the nets hold what is left of it
        if s[3] == "create":
            m.create(4)
        else:
            m.__del__()
    elif op == "attack":  # ["wip", "attack", net, "mat" | "mv", close the loader]
        wip_attack(wip_slot(s[2], WipNet), s[3], s[4])


# ---------------------------------------------------------------------------
# DataReaders written in Python ("prd" steps).
#
# A PR reader serves one stream (a WIP_NETS kind's param text, its binary param, its weights,
# or params and weights as one stream) through read(n), and misbehaves as its spec says: chunk
# sizes from 1 byte up, pieces as bytes, memoryviews, str, or bytearrays it mutates on the next
# call; at a given call it returns junk (None, an int, a float, a tuple: TypeError; more than
# asked for: ValueError), raises an exception of its own, closes itself (RuntimeError: the
# load reads through it) or another reader, loads another net or this one from plain bytes,
# loads another net through itself or another reader (reentry), collects, drops itself from
# its slot or keeps what it returned. Each event is recorded; a load through it must end in
# the first event's exception (its very object when the reader raised), or, with none, as a
# load of the same bytes from a buffer ends (prd_ref): then the net extracts what that net
# does. Whatever happened, the net then loads from plain bytes and extracts the reference.

PRD_BIN = []    # per WIP_NETS kind: [binary param (hex), the output blob's index] (from the batch header)
RENV = {}       # "prd" steps: slot -> PR reader, PNet or ModelBin
PLOADING = []   # the prd loads running now, innermost last: (PNet, PR, whether ncnn is loading the net)
PKEEP = []      # what readers kept past their read() calls
PRD_TYPES = ("ok", "ValueError", "TypeError", "RuntimeError", "PRError", "OSError")  # a loose load's outcomes


class PRError(Exception):
    """A reader's own exception."""


def prd_param(kind, how):
    """The param stream of a kind: "text" (no trailing newline: in one stream with weights, these
    start right where ncnn's scans stopped) or "bin"."""
    if how == "bin":
        return unhexlify(PRD_BIN[kind][0])
    return WIP_NETS[kind][0].rstrip().encode()


def prd_stream(kind, what, seed, cut):
    """(bytes, param how or None) of a reader's stream, cut bytes short of its end."""
    w = wip_weights(kind, seed, ["fp32", "fp16"][seed % 2:][:1])
    if what == "weights":
        data, how = w, None
    elif what in ("text", "bin"):
        data, how = prd_param(kind, what), what
    else:  # "text+w", "bin+w"
        how = what[:-2]
        data = prd_param(kind, how) + w
    return data[:max(0, len(data) - cut)], how


def prd_net(kind):
    n = ncnn_mp.Net()
    n.opt.num_threads = 1
    n.register_custom_layer("KW", KW)  # (custom type 0: KW in the binary params is CUSTOM_BIT | 0)
    return n


def prd_extract(net, binary, kind):
    with net.create_extractor() as ex:
        ex.input(0 if binary else "data", wip_input())
        return ex.extract(PRD_BIN[kind][1] if binary else "out").to_bytes()


def prd_ref(kind, how, ptext, wdata):
    """How loading ptext (param, how "text" or "bin") then wdata from buffers ends, into a net of
    kind: (param outcome, weights outcome, output bytes)."""
    key = ("prd", kind, how, ptext, wdata)
    if key not in WREFS:
        n = prd_net(kind)
        WLOAD[0] = None
        res = ["ok", None, None]
        try:
            (n.load_param_bin if how == "bin" else n.load_param)(ptext)
        except Exception as e:
            res[0] = type(e).__name__
        if res[0] == "ok" and wdata is not None:
            try:
                n.load_model(wdata)
                res[1] = "ok"
                res[2] = prd_extract(n, how == "bin", kind)
            except Exception as e:
                res[1] = type(e).__name__
        n.close()
        WREFS[key] = tuple(res)
    return WREFS[key]


def prd_plain_weights(kind):
    return wip_weights(kind, 0, ["fp32"])


def prd_plain_ref(kind):
    """What a plain load of kind's param and weights gives. Made (and cached) by the steps that
    make nets and readers, at the top of the stack: a reference first made inside a read() would
    be that load's outcome, with its deeper stack and its busy nets, not a plain load's."""
    return prd_ref(kind, "text", prd_param(kind, "text"), prd_plain_weights(kind))


class PNet:
    def __init__(self, kind):
        self.net, self.kind = prd_net(kind), kind
        self.ready = False  # its last plain load worked: it extracts the reference


class PR(ncnn_mp.DataReader):
    """See above. spec: {"chunks": [sizes; 0: all asked for], "as": [piece kinds], "ev": {call: [what, arg]}}."""

    def __init__(self, data, slot, spec):
        super().__init__()
        self.data, self.slot, self.spec = data, slot, spec
        self.kind = spec["kind"]
        self.pos = 0
        self.calls = 0
        self.events = []     # (call, expected exception type, the exception object or None)
        self.mut = None      # a bytearray it returned, mutated at its next call
        self.closed = False  # closed by the sequence (a load through it: ValueError)
        self.loose = False   # what its next load sees is not known (reentry, a rewind after a scan)
        self.ahead = None    # the stream offset a scan stopped at, if known (text params read through it)

    def event(self, what, exc):
        self.events.append((self.calls, what, exc))

    def read(self, n):
        self.calls += 1
        if self.mut is not None:  # ncnn_mp copied it: this must change nothing
            for i in range(len(self.mut)):
                self.mut[i] = 0xEE
            self.mut = None
        ev = self.spec["ev"].get(str(self.calls))
        if ev is not None:
            r = prd_act(self, ev, n)
            if r is not None:
                return r[0]
        sizes = self.spec["chunks"]
        size = sizes[(self.calls - 1) % len(sizes)] or n
        piece = self.data[self.pos:self.pos + min(n, size)]
        self.pos += len(piece)
        kinds = self.spec["as"]
        kind = kinds[(self.calls - 1) % len(kinds)]
        if kind == "mv":
            return memoryview(self.data)[self.pos - len(piece):self.pos]
        if kind == "ba":
            self.mut = bytearray(piece)
            return self.mut
        if kind == "str" and all(b < 128 for b in piece):
            return piece.decode()  # (MicroPython's str is a buffer)
        return piece


def prd_loading_readers():
    return [r for _, r, _ in PLOADING]


def prd_act(r, ev, n):
    """A reader's event at this read(): None to go on serving its data, or (what to return,)."""
    what, arg = ev
    if what == "raise":
        e = PRError("PR.read: fuzz at call %d" % r.calls) if arg == "own" else OSError(5)
        r.event("PRError" if arg == "own" else "OSError", e)
        raise e
    if what == "junk":
        junk = {"none": None, "int": 3, "float": 1.5, "tuple": (1, 2), "list": [0]}.get(arg)
        if arg == "long":
            junk = bytes(n + 1)
        elif arg == "longmv":
            junk = memoryview(bytes(n + 8))[:n + 4]
        r.event("ValueError" if arg.startswith("long") else "TypeError", None)
        return (junk,)
    if what in ("closeself", "closeself!"):
        try:
            r.close()
        except RuntimeError as e:
            if what == "closeself!":
                r.event("RuntimeError", e)
                raise
            return None
        fail("prd: close() of a reader inside its own read() worked (RuntimeError expected)")
        r.closed = True
        return None
    if what == "closeother":
        other = RENV.get(arg)
        if not isinstance(other, PR) or other is r:
            return None
        busy = other in prd_loading_readers()
        try:
            other.close()
            got = "ok"
        except Exception as e:
            got = type(e).__name__
        if got != ("RuntimeError" if busy else "ok"):
            fail("prd: close() of %s reader inside another's read(): %s" % ("a busy" if busy else "an idle", got))
        if got == "ok":
            other.closed = True
        return None
    if what in ("plainother", "plainsame"):
        rec = (PLOADING[-1][0] if PLOADING else None) if what == "plainsame" else RENV.get(arg)
        if not isinstance(rec, PNet):
            return None
        busy = any(p is rec and b for p, _, b in PLOADING)
        got = prd_plain(rec, judge=not busy)
        if busy and got != "RuntimeError":
            fail("prd: a plain load of a net loading now, from a reader's read(): %s (RuntimeError expected)" % got)
        return None
    if what in ("viaself", "viaother"):
        src = r if what == "viaself" else RENV.get(arg)
        if not isinstance(src, PR):
            return None
        for rr in (r, src):
            rr.loose = True  # the inner load took bytes of its stream: what the outer one sees is not known
        inner = PNet(r.kind)
        PLOADING.append((inner, src, True))
        try:
            (inner.net.load_param_bin if arg == "bin" else inner.net.load_param)(src)
        except Exception as e:
            if type(e).__name__ not in PRD_TYPES:
                fail("prd: a load through a reader, inside a read(), raised %s: %s" % (type(e).__name__, e))
        finally:
            PLOADING.pop()
        return None
    if what == "gc":
        gc.collect()
    elif what == "dropself":
        if RENV.get(r.slot) is r:
            RENV.pop(r.slot)
    elif what == "keep":
        PKEEP.append((r, n, r.data[r.pos:r.pos + 4]))
    return None


def prd_plain(rec, judge=True):
    """rec's net loaded from plain bytes: its extract must be the reference's. Returns the outcome."""
    kind = rec.kind
    ref = prd_plain_ref(kind)
    try:
        rec.net.load_param(prd_param(kind, "text"))
        rec.net.load_model(prd_plain_weights(kind))
        got = prd_extract(rec.net, False, kind)
    except Exception as e:
        if judge:
            fail("prd: a plain load and extract after a reader's load raised %s: %s" % (type(e).__name__, e))
        rec.ready = False
        return type(e).__name__
    if judge and got != ref[2]:
        fail("prd: a plain load after a reader's load extracts other values")
    rec.ready = True
    return "ok"


def prd_load(rec, r, method):
    """A load of rec's net through reader r, judged; then a plain load, judged."""
    kind, binary = rec.kind, method == "load_param_bin"
    what = r.spec["what"]
    pos0, calls0, nev = r.pos, r.calls, len(r.events)
    closed, loose = r.closed, r.loose
    start = r.ahead if r.ahead is not None else pos0
    r.ahead = None
    if method == "load_model":
        rec.net.load_param(prd_param(kind, "text"))
    PLOADING.append((rec, r, method != "modelbin"))  # (a ModelBin reads on its own: the net is idle)
    raised = None
    try:
        if method == "modelbin":
            raised = prd_modelbin(rec, r, start, loose or closed)
        elif method == "nocopy":
            rec.net.load_model(r, copy=False)
        else:
            getattr(rec.net, method)(r)
        got = "ok" if raised is None else type(raised).__name__
    except Exception as e:
        got, raised = type(e).__name__, e
    finally:
        PLOADING.pop()
    loose = loose or r.loose  # a read() loaded a net through it (reentry): what this load saw is not known
    events = r.events[nev:]
    label = "%s through a %s reader (%s, call %d on)" % (method, what, r.spec["as"], calls0 + 1)
    if closed or method == "nocopy":
        want = "TypeError" if method == "nocopy" else "ValueError"  # (copy=False is refused first)
        if got != want or r.calls != calls0:
            fail("prd %s%s: %s, %d read() calls (%s expected, none)" % (label, " (closed)" if closed else "",
                                                                      got, r.calls - calls0, want))
    elif events:
        want, exc = events[0][1], events[0][2]
        if got != want and not (loose and got in PRD_TYPES):
            fail("prd %s: %s, not the %s of its read() call %d" % (label, got, want, events[0][0]))
        elif exc is not None and got == want and raised is not exc and not loose:
            fail("prd %s: a new %s, not the one its read() raised" % (label, got))
    elif loose:
        if got not in PRD_TYPES:
            fail("prd %s (after a reentry or rewind): %s" % (label, got))
    elif method != "modelbin":
        prd_judge_exact(rec, r, method, label, got, start)
    if r.closed:
        pass
    elif method in ("load_param",) and not events and not loose and what == "text+w" and got == "ok":
        r.ahead = len(prd_param(kind, "text"))  # the weights' first byte: where the scans stopped
    elif method == "load_param":
        r.loose = True  # a scan's look-ahead keeps bytes read() returned: where they end is not known
    prd_plain(rec)


def prd_judge_exact(rec, r, method, label, got, start):
    """No event, nothing loose: the load ends as a load of the same bytes from a buffer, and
    the net extracts what that one does."""
    kind, data = rec.kind, r.data[start:]
    if method == "load_model":
        ref = prd_ref(kind, "text", prd_param(kind, "text"), data)
        want = ref[1]
    else:
        how = "bin" if method == "load_param_bin" else "text"
        ref = prd_ref(kind, how, data, prd_plain_weights(kind))
        want = ref[0]
    if got != want:
        fail("prd %s: %s, where a load of the same bytes from a buffer gives %s" % (label, got, want))
        return
    if got != "ok":
        return
    binary = method == "load_param_bin"
    try:
        if method != "load_model":
            rec.net.load_model(prd_plain_weights(kind))
        out = prd_extract(rec.net, binary, kind)
    except Exception as e:
        if ref[2] is not None:
            fail("prd %s: the extract after it raised %s: %s" % (label, type(e).__name__, e))
        return
    if out != ref[2]:
        fail("prd %s: the net extracts other values than a load from a buffer gives" % label)


def prd_modelbin(rec, r, start, loose):
    """ModelBin(from_datareader=r), then the kind's weight chunks loaded one by one; each
    outcome compared with a ModelBin over the same bytes in memory. Returns what to judge:
    None (judged here), or the exception the loads ended in."""
    kind = rec.kind
    mb = ncnn_mp.ModelBin(from_datareader=r)
    RENV["mb"] = mb  # kept: "mbmore" loads again later, the reader maybe dropped and collected
    nev = len(r.events)
    refmb = ncnn_mp.ModelBin(from_datareader=ncnn_mp.DataReader(from_memory=r.data[start:]))
    for what, n in WIP_NETS[kind][1]:
        t = 1 if what == "raw" else 0
        try:
            want = refmb.load(n, t).to_bytes()
        except Exception as e:
            want = type(e).__name__
        try:
            got = mb.load(n, t).to_bytes()
        except Exception as e:
            if len(r.events) > nev or loose or r.loose:
                return e  # the loads ended in it: judged as a load's exception
            got = type(e).__name__
        if len(r.events) > nev or loose or r.loose:
            continue
        if got != want:
            fail("prd ModelBin(from_datareader=) load(%d, %d): %s, from memory %s" % (
                n, t, got if isinstance(got, str) else "other values", want if isinstance(want, str) else "values"))
            return None
        if isinstance(got, str):
            return None
    return None


def prd_slot(name, cls):
    obj = RENV.get(name)
    if not isinstance(obj, cls):
        raise LookupError(name)
    return obj


def do_prd(s):
    op = s[1]
    if op == "net":  # ["prd", "net", slot, kind]
        RENV[s[2]] = PNet(s[3])
        prd_plain_ref(s[3])
    elif op == "reader":  # ["prd", "reader", slot, kind, what, seed, cut, spec]
        prd_plain_ref(s[3])
        data, _ = prd_stream(s[3], s[4], s[5], s[6])
        spec = dict(s[7])
        spec["what"], spec["kind"] = s[4], s[3]
        RENV[s[2]] = PR(data, s[2], spec)
    elif op == "load":  # ["prd", "load", net, reader, method]
        prd_load(prd_slot(s[2], PNet), prd_slot(s[3], PR), s[4])
    elif op == "run":  # the last plain load still extracts the reference (after collections, drops)
        rec = prd_slot(s[2], PNet)
        if not rec.ready:
            raise LookupError  # never loaded
        kind = rec.kind
        ref = prd_plain_ref(kind)
        try:
            got = prd_extract(rec.net, False, kind)
        except Exception as e:
            fail("prd: extract raised %s: %s" % (type(e).__name__, e))
            raise
        if got != ref[2]:
            fail("prd: extract gives other values than the reference")
    elif op == "close":
        r = prd_slot(s[2], PR)
        r.close()  # nothing reads through it now: must work
        r.closed = True
    elif op == "rewind":
        r = prd_slot(s[2], PR)
        r.pos, r.ahead = 0, None
        if r.spec["what"].startswith("text"):
            r.loose = True
    elif op == "drop":
        RENV.pop(s[2], None)
    elif op == "mbmore":  # one more load from the kept ModelBin: any Python outcome, no crash
        mb = RENV.get("mb")
        if mb is None:
            raise LookupError
        try:
            mb.load(4, 1)
        except Exception as e:
            if type(e).__name__ not in PRD_TYPES:
                fail("prd: a kept ModelBin's load raised %s: %s" % (type(e).__name__, e))
            raise
    elif op == "unkeep":
        PKEEP.clear()


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
    elif what == "derive":  # Mats made from the lent Mats, kept past the call
        derive(lent, extra)
    elif what in ("lent", "empty", "count", "notmat"):
        return (what, None)
    return None


def hook(spec):
    """Extractor.extract's hook from its spec (api_fuzz.py's hook_spec): at its `at`-th call it does
    what the spec says; every call checks its arguments' types."""
    what, at = spec["what"], spec["at"]
    if what == "none":
        return None
    if what == "notcallable":
        return 3
    calls = [0]

    def call(index, name, type_, count):
        calls[0] += 1
        if not (isinstance(index, int) and isinstance(count, int) and 0 <= index < count
                and (name is None or isinstance(name, str)) and (type_ is None or isinstance(type_, str))):
            fail("hook arguments %r" % ((index, name, type_, count),))
        if calls[0] != at:
            return None
        if what == "raise":
            raise {"ValueError": ValueError, "MemoryError": MemoryError, "KeyboardInterrupt": KeyboardInterrupt,
                   "SystemExit": SystemExit, "RuntimeError": RuntimeError}[spec["extra"]]("fuzz: hook")
        if what == "reenter":
            do(spec["extra"])
        elif what == "keep":
            KEEP.append(name)
        return None

    return (lambda: None) if what == "arity" else call


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


# ---------------------------------------------------------------------------
# "r2" steps (api_fuzz.Generator.round_two): each raises what it should, or runs.

def r2_mat(shape, elemsize, elempack):
    """A Mat of that shape and element kind, every byte set (memcheck: nothing uninitialised)."""
    m = ncnn_mp.Mat(*shape, elemsize=elemsize * elempack, elempack=elempack)
    m.from_bytes(bytes(len(m.to_bytes())))
    return m


def r2_expect(what, f, *kinds):
    """f() must raise one of kinds (exception classes); anything else is a FAIL line."""
    try:
        f()
    except kinds:
        return
    except Exception as e:
        fail("r2 %s: %s %s (expected %s)" % (what, type(e).__name__, e, "/".join(k.__name__ for k in kinds)))
        return
    fail("r2 %s: no exception (expected %s)" % (what, "/".join(k.__name__ for k in kinds)))


class R2Reader(ncnn_mp.DataReader):
    """A reader of zeros whose first read() closes what `closes` names; it notes what close raised."""

    def __init__(self, closes):
        super().__init__()
        self.closes = closes
        self.target = None
        self.raised = None

    def read(self, n):
        if self.raised is None:
            try:
                (self.target or self).close()
                self.raised = "nothing"
            except Exception as e:
                self.raised = type(e).__name__
        return bytes(n)


def r2_inner_product(n_in):
    layer = ncnn_mp.Layer("InnerProduct")
    pd = ncnn_mp.ParamDict()
    pd.set(0, 2)
    pd.set(2, 2 * n_in)
    layer.load_param(pd)
    return layer


# "r3" steps (api_fuzz.round_three): a result or the exception of a user's mistake, never a
# crash (what valgrind and the sanitizers see is judged by the run's exit).
R3_MISTAKES = (ValueError, TypeError, MemoryError, IndexError, NotImplementedError)


def r3_outcome(what, f):
    try:
        f()
    except R3_MISTAKES:
        pass
    except Exception as e:
        fail("r3 %s: %s %s" % (what, type(e).__name__, e))


def do_r3(s):
    opt = ncnn_mp.Option()
    if s[1] == "pad":  # ["r3", "pad", type, [[key, value], ...], shape]
        def run():
            layer = ncnn_mp.Layer(s[2])
            pd = ncnn_mp.ParamDict()
            for k, v in s[3]:
                pd.set(k, v)
            layer.load_param(pd)
            layer.load_model(ncnn_mp.ModelBin(from_datareader=ncnn_mp.DataReader(zeros=True)))
            x = ncnn_mp.Mat(*s[4])
            x.fill(0.5)
            layer.forward(x, opt)
        r3_outcome("pad %s %s %s" % (s[2], s[3], s[4]), run)
        return
    # ["r3", "camera", format, target, w, h, stride kind, buffer kind, op, side]
    M = ncnn_mp.Mat
    if not hasattr(M, s[2]) or not hasattr(M, "from_pixels"):
        return  # (a firmware without camera frames)
    fmt, w, h = getattr(M, s[2]), s[4], s[5]
    target = getattr(M, s[3]) if s[3] else 0
    yuv420 = s[2] in ("PIXEL_NV12", "PIXEL_NV21")
    row = w if yuv420 else 2 * w
    stride = {"exact": row, "short": row - 1, "long": row + 3, "zero": 0}[s[6]]
    rows = h + (h + 1) // 2 if yuv420 else h
    size = max(stride, row) * rows
    size = {"exact": size, "short": max(0, size - 1), "long": size + 5}[s[7]]
    pixels = bytearray(i * 7 & 255 for i in range(size))
    ftype = fmt | (target << 16) if target else fmt
    if s[8] == "from_pixels":
        r3_outcome("camera %s" % s[2:], lambda: M.from_pixels(pixels, ftype, w, h, stride))
    elif s[8] == "from_pixels_resize":
        r3_outcome("camera %s" % s[2:], lambda: M.from_pixels_resize(pixels, ftype, w, h, s[9], s[9] + 1, stride))
    else:
        def back():
            m = M(w, h, 3)
            m.fill(0.25)
            m.to_pixels(ftype, pixels, stride)
        r3_outcome("camera %s" % s[2:], back)


def do_r2(s):
    op = s[1]
    opt = ncnn_mp.Option()
    if op == "zoo":  # ["r2", "zoo", typeindex, [[key, value], ...], [[shape, elemsize, elempack], ...], n_top, inplace]
        layer = ncnn_mp.Layer(typeindex=s[2])
        pd = ncnn_mp.ParamDict()
        for k, v in s[3]:
            pd.set(k, v)
        layer.load_param(pd)
        layer.load_model(ncnn_mp.ModelBin(from_datareader=ncnn_mp.DataReader(zeros=True)))
        bottoms = [r2_mat(*b) for b in s[4]]
        if s[6]:
            layer.forward_inplace(bottoms, opt)
        else:
            layer.forward(bottoms, s[5], opt)
    elif op == "mba":  # ["r2", "mba", [kind, ...]]: only float32 weights of the right count load
        mats = []
        for kind in s[2]:
            n = 20 if kind != "short" else 19
            n = 21 if kind == "long" else n
            if kind == "i8":
                mats.append(r2_mat([n], 1, 1))
            elif kind == "f16":
                mats.append(r2_mat([n], 2, 1))
            elif kind == "pack4":
                mats.append(r2_mat([5], 4, 4))
            elif kind != "none":
                mats.append(r2_mat([n], 4, 1))
        layer = r2_inner_product(10)
        mb = ncnn_mp.ModelBin(from_mat_array=mats)
        given = [k for k in s[2] if k != "none"]  # (the Mats the array holds, in order)
        if given and given[0] == "f32":
            layer.load_model(mb)
            out = layer.forward(r2_mat([10], 4, 1), opt)
            if (out[0], out[1]) != (0.0, 0.0):
                fail("r2 mba: zero weights gave %s, %s" % (out[0], out[1]))
        else:
            r2_expect("mba %s" % s[2], lambda: layer.load_model(mb), ValueError)
    elif op == "close":  # ["r2", "close", what]: close() of what a read() serves is refused
        r = R2Reader(s[2])
        mb = ncnn_mp.ModelBin(from_datareader=r)
        if s[2] != "dr_in_read":
            r.target = mb
        if s[2] == "mb_in_layer_load":
            r2_inner_product(5).load_model(mb)
        else:
            mb.load(10, 1)
        if r.raised != "RuntimeError":
            fail("r2 close %s: close() in read() gave %s (expected RuntimeError)" % (s[2], r.raised))
        mb.close()
        r.close()
    elif op == "view":  # ["r2", "view", kind]: copy=False only over memory that stays
        net = ncnn_mp.Net()
        over = ncnn_mp.Mat(4, 4, data=bytes(64))
        if s[2] == "own":
            src = memoryview(r2_mat([16], 4, 1))
        elif s[2] == "border":
            src = memoryview(over.copy_make_border(1, 1, 1, 1, ncnn_mp.Mat.BORDER_CONSTANT, 0.0, opt))
        elif s[2] == "mid":
            src = memoryview(ncnn_mp.Mat(4, data=memoryview(bytes(256))[64:80]))
        elif s[2] == "bytes":
            src = bytes(64)
        else:
            src = memoryview(bytes(256))[64:128]
        stays = s[2] in ("bytes", "bytes_slice")
        try:
            net.load_model(src, copy=False)
        except ValueError as e:
            if stays and "stays" in str(e):
                fail("r2 view %s: refused: %s" % (s[2], e))
            elif not stays and "copy=False" not in str(e):
                fail("r2 view %s: %s (expected copy=False refused)" % (s[2], e))
        except Exception as e:
            fail("r2 view %s: %s %s" % (s[2], type(e).__name__, e))
        else:
            if not stays:
                fail("r2 view %s: loaded in place" % s[2])
        net.close()
    elif op == "huge":  # ["r2", "huge", what, side]: ValueError or MemoryError, never ncnn's abort
        side = s[3]
        if not hasattr(ncnn_mp.Mat, "from_pixels"):
            return
        M = ncnn_mp.Mat
        if s[2] == "font":
            r2_expect("font", lambda: M.draw_text(bytearray(64), 8, 8, 1, "A", 0, 0, side, 255), ValueError, MemoryError)
        elif side < 16384:  # (may fit the heap: any outcome but a crash)
            M.from_pixels_resize(bytes(48), M.PIXEL_GRAY, 4, 4, side // 64, side // 64)
        elif s[2] == "resize":  # (more than ncnn_mp lets ncnn allocate at once)
            r2_expect("resize", lambda: M.from_pixels_resize(bytes(48), M.PIXEL_RGB, 4, 4, side, side), MemoryError)
        elif s[2] == "resize_roi":
            r2_expect("roi", lambda: M.from_pixels_roi_resize(bytes(48), M.PIXEL_RGB, 4, 4, 0, 0, 2, 2, side, side),
                      MemoryError)
        else:
            small = r2_mat([4, 4, 3], 4, 1)
            r2_expect("to_pixels", lambda: small.to_pixels_resize(M.PIXEL_RGB, side, side), MemoryError)


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
        AT[0] = sid
        for i, s in enumerate(seq["steps"]):
            if verbose:
                out.write("s %d %d\n" % (sid, i))
            AT[1] = i
            r = run_step(s)
            counts[r] = counts.get(r, 0) + 1
        for why in FAILS:
            out.write("FAIL %d %s\n" % (sid, why))
        for table in (POOL, KEEP, CALLS, DERIVED, AENV, EXPECT, BUFS, WENV, WKEPT, WREFS, RENV, PLOADING, PKEEP, FAILS):
            table.clear()
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
    WIP_NETS.extend(head.get("wip", ()))
    PRD_BIN.extend(head.get("prdbin", ()))
    for n in range(head.get("passes", 1)):
        with open(batch_path) as f:
            f.readline()
            run_pass(f, out, head.get("verbose", False))
        out.write("P %d %d\n" % (n + 1, gc.mem_alloc() if settle() <= STALE_NETS else -1))
    out.write("DONE %d\n" % settle())
    out.close()


main(sys.argv[1], sys.argv[2])

# SPDX-License-Identifier: MIT
# The MicroPython side of the loader fuzzer: runs a batch of mutated models through
# load_param / load_param_bin / load_model / extract, one case after another in this
# one process (tests/fuzz/loader_fuzz.py writes the batch and reads the results).
#
#   micropython loader_runner.py BATCH RESULTS    (MICROPYPATH naming tests/mp: fuzzlib sets it)
#
# BATCH: one JSON line describing the model families, then per case a JSON header
# line followed by the case's raw param bytes (header "np" long).
# RESULTS, one line each, written before and after every case so that the driver knows
# which case a crashed or hung process was in:
#   S <id>                 the case starts
#   R <id> <outcome>       it ended: "ok" or "<stage>:<ExceptionType>" (stages: param,
#                          model, extract), then with "force" the later stages tried after it
#   I <id> <outcome>       a case with "ip": its weights loaded in place (load_model(copy=False))
#                          as well, and compared with a copying load of the same bytes:
#                          "ok", "<stage>:<ExceptionType>" as both gave, or "BAD <why>"
#   A <id> ok|BAD <why>    an array case ("arr", loader_fuzz.make_array_case): its mutated model
#                          raised ValueError or MemoryError naming the layer, or gave the
#                          outputs of the same model with the array exactly as long as read
#   H <id> ok|BAD <why>    the same Net, cleared, loaded the real model and gave its answer
#                          (in place too, for a case with "ip")
#   DONE <live layers>     0 when no more than stale words can hold (mptest.STALE_NETS)
import gc
import sys

import ncnn_mp
from binascii import unhexlify

# (tests/mp is on MICROPYPATH, which fuzzlib's firmware() sets)
from mptest import STALE_NETS, Standardize, read, settle  # noqa: E402

import json  # noqa: E402

CUSTOM = {"Standardize": Standardize}


class Family:
    """One real model the cases mutate: its files, its input and its reference answer."""

    def __init__(self, name, info):
        self.name = name
        self.param_path = info["param"]
        self.bin_path = info["bin"]
        self.custom = info["custom"]
        self.input = info["input"]
        self.shape = info["shape"]
        self.outputs = info["outputs"]
        self._bin = None
        self._net = None
        self.reference = None

    def param(self):
        return read(self.param_path)

    def weights(self):
        if self._bin is None:
            self._bin = read(self.bin_path) if self.bin_path else b""
        return self._bin

    def new_net(self):
        net = ncnn_mp.Net()
        net.opt.num_threads = 1
        # ncnn numbers types registered by name 0, 1, ...: binary params say CUSTOM_BIT | n.
        for t in self.custom:
            net.register_custom_layer(t, CUSTOM[t])
        return net

    def shared_net(self):
        """The Net this family's cases share: every failure must leave it usable."""
        if self._net is None:
            self._net = self.new_net()
        return self._net

    def load_good(self, net, in_place=False):
        """Load the real model into net with default options (the reference's); in_place: its
        weights left in a bytes object only the net holds (load_model(copy=False))."""
        net.clear()
        set_options(net, None)
        net.load_param(self.param_path)
        if in_place and self.bin_path:
            net.load_model(bytes(bytearray(self.weights())), copy=False)
        else:
            net.load_model(self.bin_path if self.bin_path else ncnn_mp.DataReader(zeros=True))

    def answer(self, net):
        with net.create_extractor() as ex:
            ex.input(self.input, standard_input(self.shape))
            return ex.extract(self.outputs[0]).to_bytes()

    def health(self, net, in_place=False):
        """None if net, reloaded with the real model, gives the reference answer; else why
        not. (net None: only make the reference.) in_place: then again with the weights in
        place, after a collection that would free them if the net did not keep them."""
        if self.reference is None:
            fresh = self.new_net()
            self.load_good(fresh)
            self.reference = self.answer(fresh)
            fresh.close()
        if net is None:
            return None
        for ip in (False, True) if in_place else (False,):
            try:
                self.load_good(net, ip)
                if ip:
                    churn(len(self.weights()))
                got = self.answer(net)
            except Exception as e:
                return "%s%s: %s" % ("in place: " if ip else "", type(e).__name__, e)
            if got != self.reference:
                return "a different answer" + (" with the weights in place" if ip else "")
        return None


def standard_input(shape):
    m = ncnn_mp.Mat(*shape)
    m.fill(0.5)
    return m


def set_options(net, flags):
    """flags: [winograd, sgemm, packing], None for the defaults the reference uses."""
    o = net.opt
    w, s, p = flags if flags else (False, True, True)
    o.use_winograd_convolution = w
    o.use_sgemm_convolution = s
    o.use_packing_layout = p


def mutate_weights(data, ops):
    b = bytearray(data)
    for op in ops:
        kind = op[0]
        if kind == "trunc":
            b = b[: op[1]]
        elif kind == "set":
            raw = unhexlify(op[2])
            off = min(op[1], len(b))
            b[off : off + len(raw)] = raw
        elif kind == "ins":
            off = min(op[1], len(b))
            b[off:off] = unhexlify(op[2])
        elif kind == "del":
            b[op[1] : op[1] + op[2]] = b""
        elif kind == "ext":
            b.extend(unhexlify(op[1]))
        elif kind == "rand":
            b = bytearray(unhexlify(op[1]))
    return bytes(b)


def source(data, via, tmp, suffix):
    """data as the loaders take it: a buffer, a DataReader over it, or a file path."""
    if via == "dr":
        return ncnn_mp.DataReader(from_memory=data)
    if via == "path":
        path = tmp + "/case" + suffix
        with open(path, "wb") as f:
            f.write(data)
        return path
    return data


def load_param(net, c, param, tmp):
    if c["pk"] == "bin":
        net.load_param_bin(source(param, c["via"], tmp, ".param.bin"))
    elif c["via"] == "mem":
        net.load_param_mem(param)
    else:
        net.load_param(source(param, c["via"], tmp, ".param"))


def weights_of(c, fam):
    """The case's .bin: the real one or the damaged one (None: no weights file)."""
    if c["model"] == "good":
        return fam.weights()
    if c["model"] == "mut":
        return mutate_weights(fam.weights(), c["mops"])
    return None


def load_model(net, c, fam, tmp):
    if c["model"] == "zeros":
        net.load_model(ncnn_mp.DataReader(zeros=True))
    elif c["model"] != "none":
        net.load_model(source(weights_of(c, fam), c["mvia"], tmp, ".bin"))


def extract(net, c):
    """The bytes of each output the case asks for."""
    outs = []
    if c["in"]:
        with net.create_extractor() as ex:
            name, shape = c["in"]
            ex.input(name, standard_input(shape))
            for o in c["out"]:
                outs.append(ex.extract(o).to_bytes())
    return outs


def run_case(fam, c, param, tmp):
    """The case's outcome: "ok", or "stage:Exception" of the first stage that failed, and with
    c["force"] the later stages tried all the same ("stage:ok" or "stage:Exception"), "/"-joined."""
    net = fam.new_net() if c["fresh"] else fam.shared_net()
    net.clear()  # options may only change on an unloaded Net
    set_options(net, c["opt"])
    parts = []
    for stage in ("param", "model", "extract"):
        if parts and not c["force"]:
            break
        try:
            if stage == "param":
                load_param(net, c, param, tmp)
            elif stage == "model":
                load_model(net, c, fam, tmp)
            else:
                extract(net, c)
            if parts:
                parts.append(stage + ":ok")
        except Exception as e:
            parts.append(stage + ":" + type(e).__name__)
    return net, "/".join(parts) if parts else "ok"


# ---------------------------------------------------------------------------
# Weights in place (cases with "ip"): the same bytes loaded by copy and in place must
# give the same outcome and the same floats. In place, ncnn's layers point into the
# buffer: with "drop" the runner then lets go of it, collects and fills the freed heap
# with other bytes, so a net that did not keep its buffer alive computes from garbage;
# without, the buffer is compared after the extract (ncnn must never write into it).

def churn(n):
    """Collect, then allocate bytes objects the size of a dropped buffer and fill them:
    whatever the collector freed now holds 0x7f7f7f7f (a large float) instead."""
    gc.collect()
    return [b"\x7f" * (n + k) for k in (0, 4, 16, 64) for _ in range(4)]


def over(data, ip):
    """The buffer the in-place load gets: a bytes object of its own, or a read-only memoryview
    slice at ip["pad"] bytes into a larger bytes object (junk after it: the slice's end must
    bound the reads)."""
    if ip["via"] == "bytes":
        return bytes(bytearray(data))
    whole = b"\xa5" * ip["pad"] + data + b"\x5a" * ip["tail"]
    return memoryview(whole)[ip["pad"]:ip["pad"] + len(data)]


def load_and_run(net, c, param, tmp, make, copy, keep):
    """The case's param, then the weights make() returns, loaded by copy or in place, then its
    extract: (outcome, outputs, weights_info or None), the outcome "ok" or "<stage>:<Exception>".
    The weights are made here and appended to `keep`, if given: kept None, nothing but the
    net holds them by the extract, and the heap is collected and reused in between."""
    net.clear()
    set_options(net, c["opt"])
    try:
        load_param(net, c, param, tmp)
    except Exception as e:
        return "param:" + type(e).__name__, None, None
    weights = make()
    n = len(weights)
    if keep is not None:
        keep.append(weights)
    try:
        net.load_model(weights, copy=copy)
    except Exception as e:
        return "model:" + type(e).__name__, None, None
    weights = None
    info = net.weights_info()
    junk = churn(n) if keep is None else None
    try:
        return "ok", extract(net, c), info
    except Exception as e:
        return "extract:" + type(e).__name__, None, info
    finally:
        junk = None


def in_place_verdict(data, ip, copied, placed):
    """Why the in-place load of `data` went wrong against the copying one, or None."""
    if ip["pad"] % 4 and not placed[0].startswith("param:"):  # refused, whatever the bytes
        return None if placed[0] == "model:ValueError" else "unaligned buffer: %s, not model:ValueError" % placed[0]
    if placed[0] != copied[0]:
        return "in place %s, copying %s" % (placed[0], copied[0])
    if placed[1] != copied[1]:
        return "in place the outputs differ from copying's"
    if placed[2] is None:
        return None
    cp, pl = copied[2], placed[2]
    if None in (pl["in_place"], pl["converted"], pl["unused"], cp["copied"], cp["unused"]):
        return "weights_info counted nothing: %r, %r" % (pl, cp)
    # The same bytes consumed; in place, what was neither lent nor converted was weight tags (4 bytes each).
    tags = cp["copied"] - pl["in_place"] - pl["converted"]
    if cp["copied"] + cp["unused"] != len(data) or pl["unused"] != cp["unused"] or tags < 0 or tags % 4:
        return "weights_info in place %r, copying %r, %d bytes" % (pl, cp, len(data))
    return None


def in_place(net, c, fam, param, tmp):
    """The case's weights copied, then in place, into `net`: "ok" or "<stage>:<Exception>"
    (both the same), or "BAD <why>"."""
    ip, data = c["ip"], weights_of(c, fam)
    if ip["real"]:  # the family's own param, input and output: the damage is in the weights alone
        c = dict(c, pk="text", via="buf", out=fam.outputs[:1], **{"in": [fam.input, fam.shape]})
        param = fam.param()
    try:
        copied = load_and_run(net, c, param, tmp, lambda: data, True, [])
        keep = None if ip["drop"] else []
        placed = load_and_run(net, c, param, tmp, lambda: over(data, ip), False, keep)
    except Exception as e:  # weights_info() after a load that worked, or the runner's own
        return "BAD %s: %s" % (type(e).__name__, e)
    if keep and bytes(keep[0]) != data:
        return "BAD ncnn wrote into the buffer it was lent"
    why = in_place_verdict(data, ip, copied, placed)
    return "BAD " + why if why else placed[0]


# ---------------------------------------------------------------------------
# Array cases: one layer whose parameter array is shorter or longer than its forward reads,
# against the same layer with the array exactly as long (c["ref"], c["ref_w"]).

def array_input(shape):
    """The input test_param_arrays.py gives: 0, 0.25, ... 1.0 along each channel (each value of
    it: a volume's depth too)."""
    x = ncnn_mp.Mat(*shape)
    for k in range(x.c):
        for j in range(x.w * x.h * x.d):
            x[k * x.cstep + j] = 0.25 * (j % 5)
    return x


def array_run(c, param, weights):
    """(outcome, output bytes or None, exception or None) of param + weights on the case's input."""
    net = ncnn_mp.Net()
    net.opt.num_threads = 1
    set_options(net, c["opt"])
    stage = "param"
    try:
        net.load_param(param)
        stage = "model"
        net.load_model(weights)
        stage = "extract"
        with net.create_extractor() as ex:
            for i, shape in enumerate(c["shapes"]):
                ex.input("data" if i == 0 else "data%d" % i, array_input(shape))
            return "ok", ex.extract("out").to_bytes(), None
    except Exception as e:
        return stage + ":" + type(e).__name__, None, e
    finally:
        net.close()


def array_verdict(c, exact, got):
    """Why the mutated model's run is wrong, or None."""
    if exact[0] != "ok":
        return "the exact array did not run: %s %s" % (exact[0], exact[2])
    outcome, out, e = got
    have, need = c["have"], c["need"]
    if outcome == "ok":
        if have < need and have != 0 and have not in c["broadcast"]:
            return "ran with %d of the %d elements read" % (have, need)
        if have == 0 or (c["keep"] != have and c["w"]):
            # (no array may mean none; a .bin holding another length than the param says
            # shifts the arrays after it: not compared, valgrind sees a read past them)
            return None
        if out != exact[1]:
            return "outputs differ from the exact array's"
        return None
    if type(e) not in (ValueError, MemoryError):
        return "%s %s: %s" % (outcome, type(e).__name__, e)
    # At extract the layer is named: layer 'name' (Type). A load names the call, and the layer
    # where one failed it (its load_param or load_model, or the guard); where ncnn's own parsing
    # failed, the call alone.
    if type(e) is ValueError:
        stage = outcome.split(":")[0]
        layer = "'%s' (%s)" % (c["name"], c["layer"])
        named = layer if stage == "extract" else "Net.load_" + stage
        if named not in str(e):
            return "%s ValueError not naming %s: %s" % (outcome, named, e)
        if stage != "extract" and "layer '" in str(e) and layer not in str(e):
            return "%s ValueError naming another layer than %s: %s" % (outcome, layer, e)
    return None


def run_array(c, param, out):
    cid = c["id"]
    out.write("S %d\n" % cid)
    got = array_run(c, param, unhexlify(c["w"]))
    out.write("R %d %s\n" % (cid, got[0]))
    exact = array_run(c, c["ref"].encode(), unhexlify(c["ref_w"]))
    why = array_verdict(c, exact, got)
    out.write("A %d %s\n" % (cid, "ok" if why is None else "BAD " + why))


def run_one(fam, c, param, tmp, out):
    """One case and its checks, written to out. (A function of its own: main's frame lives in
    the heap for the whole run, and the words left in its value stack, which the collector
    scans, would keep this case's Net alive to the end.)"""
    cid = c["id"]
    out.write("S %d\n" % cid)
    net, outcome = run_case(fam, c, param, tmp)
    out.write("R %d %s\n" % (cid, outcome))
    if c.get("ip"):
        out.write("I %d %s\n" % (cid, in_place(net, c, fam, param, tmp)))
    if c["check"]:
        why = fam.health(net, "ip" in c)
        out.write("H %d %s\n" % (cid, "ok" if why is None else "BAD " + why))


def main(batch_path, results_path):
    tmp = results_path.rsplit("/", 1)[0]
    out = open(results_path, "w")
    with open(batch_path, "rb") as f:
        head = json.loads(f.readline())
        families = {k: Family(k, v) for k, v in head["families"].items()}
        # The reference answers first, before any damaged model runs: once ncnn has read or
        # written out of bounds (KNOWN_NCNN_ISSUES.md), a reference made later may be wrong.
        for name in head.get("checked", ()):
            families[name].health(None)
        while True:
            line = f.readline()
            if not line:
                break
            c = json.loads(line)
            if "arr" in c:
                run_array(c, f.read(c["np"]), out)
            else:
                run_one(families[c["fam"]], c, f.read(c["np"]), tmp, out)
            if c["gc"]:
                gc.collect()
    for fam in families.values():
        if fam._net is not None:
            fam._net.close()
            fam._net = None
    # A word left on the C stack or in a heap-allocated frame can keep a dropped Net alive
    # through the final collection, the same word on every run: only more is a leak.
    live = settle()
    out.write("DONE %d\n" % (live if live > STALE_NETS else 0))
    out.close()


main(sys.argv[1], sys.argv[2])

# The MicroPython side of the loader fuzzer: runs a batch of mutated models through
# load_param / load_param_bin / load_model / extract, one case after another in this
# one process (tests/fuzz/loader_fuzz.py writes the batch and reads the results).
#
#   micropython loader_runner.py BATCH RESULTS
#
# BATCH: one JSON line describing the model families, then per case a JSON header
# line followed by the case's raw param bytes (header "np" long).
# RESULTS, one line each, written before and after every case so that the driver knows
# which case a crashed or hung process was in:
#   S <id>                 the case starts
#   R <id> <outcome>       it ended: "ok" or "<stage>:<ExceptionType>" (stages: param,
#                          model, extract), then with "force" the later stages tried after it
#   H <id> ok|BAD <why>    the same Net, cleared, loaded the real model and gave its answer
#   DONE <live layers>
import gc
import sys

import ncnn_mp
from binascii import unhexlify

sys.path.append("../mp")
from mptest import Standardize, read, settle  # noqa: E402

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

    def load_good(self, net):
        """Load the real model into net with default options (the reference's)."""
        net.clear()
        set_options(net, None)
        net.load_param(self.param_path)
        net.load_model(self.bin_path if self.bin_path else ncnn_mp.DataReader(zeros=True))

    def answer(self, net):
        with net.create_extractor() as ex:
            ex.input(self.input, standard_input(self.shape))
            return ex.extract(self.outputs[0]).to_bytes()

    def health(self, net):
        """None if net, reloaded with the real model, gives the reference answer; else why
        not. (net None: only make the reference.)"""
        if self.reference is None:
            fresh = self.new_net()
            self.load_good(fresh)
            self.reference = self.answer(fresh)
            fresh.close()
        if net is None:
            return None
        try:
            self.load_good(net)
            got = self.answer(net)
        except Exception as e:
            return "%s: %s" % (type(e).__name__, e)
        return None if got == self.reference else "a different answer"


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


def load_model(net, c, fam, tmp):
    model = c["model"]
    if model == "good":
        net.load_model(source(fam.weights(), c["mvia"], tmp, ".bin"))
    elif model == "zeros":
        net.load_model(ncnn_mp.DataReader(zeros=True))
    elif model == "mut":
        net.load_model(source(mutate_weights(fam.weights(), c["mops"]), c["mvia"], tmp, ".bin"))


def extract(net, c):
    if c["in"]:
        with net.create_extractor() as ex:
            name, shape = c["in"]
            ex.input(name, standard_input(shape))
            for o in c["out"]:
                ex.extract(o)


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
            param = f.read(c["np"])
            cid = c["id"]
            out.write("S %d\n" % cid)
            fam = families[c["fam"]]
            net, outcome = run_case(fam, c, param, tmp)
            out.write("R %d %s\n" % (cid, outcome))
            if c["check"]:
                why = fam.health(net)
                out.write("H %d %s\n" % (cid, "ok" if why is None else "BAD " + why))
            net = None
            if c["gc"]:
                gc.collect()
    for fam in families.values():
        if fam._net is not None:
            fam._net.close()
            fam._net = None
    out.write("DONE %d\n" % settle())
    out.close()


main(sys.argv[1], sys.argv[2])

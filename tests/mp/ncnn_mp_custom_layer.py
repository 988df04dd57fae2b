# SPDX-License-Identifier: MIT
# Custom layers written in Python: both forward styles, params and weights, several
# blobs, replacing built-ins, and every way a layer can go wrong.
import gc
import struct

import micropython

import ncnn_mp
from mptest import *  # noqa: F401,F403

require("NCNN_STRING")  # layer and blob names

Layer = ncnn_mp.Layer



def values(m):
    return [round(x, 4) for x in memoryview(m)]


def make_net(param, layers, weights=b""):
    net = ncnn_mp.Net()
    for name, cls in layers.items():
        net.register_custom_layer(name, cls)
    net.load_param_mem(param)
    net.load_model(weights)
    return net


def run(net, inputs, out="out"):
    ex = net.create_extractor()
    for name, m in inputs.items():
        ex.input(name, m)
    return ex.extract(out)


class AddBias(Layer):  # in place, with a parameter
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def load_param(self, pd):
        self.bias = pd.get(0, 0.0)
        return 0

    def forward_inplace(self, blob, opt):
        for i in range(blob.w):
            blob[i] += self.bias
        return 0


class Double(Layer):  # CPython ncnn style: forward(bottom, top, opt) fills top
    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, top, opt):
        top.clone_from(bottom)
        for i in range(top.w):
            top[i] *= 2
        return 0


class Head2(Layer):  # earlier ncnn_mp style: forward(bottom, opt) returns a Mat of another shape
    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, opt):
        return mat(bottom[0], bottom[1])


class MulW(Layer):  # weights through load_model
    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def load_param(self, pd):
        self.n = pd.get(0, 0)

    def load_model(self, mb):
        self.w = mb.load(self.n, 1).clone()

    def forward(self, bottom, opt):
        out = bottom.clone()
        for i in range(self.n):
            out[i] = bottom[i] * self.w[i]
        return out


class SumDiff(Layer):  # two bottoms, two tops
    def forward(self, bottoms, opt):
        a, b = bottoms
        return mat(*[a[i] + b[i] for i in range(a.w)]), mat(*[a[i] - b[i] for i in range(a.w)])


P_CHAIN = """7767517
4 4
Input    data 0 1 data 0=4
AddBias  ab   1 1 data x 0=1.5
Double   dbl  1 1 x y
Head2    h2   1 1 y out
"""
net = make_net(P_CHAIN, {"AddBias": AddBias, "Double": Double, "Head2": Head2})
print("chain", values(run(net, {"data": mat(0, 1, 2, 3)})), values(run(net, {"data": mat(1, 1, 1, 1)}, "y")))
print("live", ncnn_mp.live_custom_layers())

P_SCALE = """7767517
2 2
Input data 0 1 data 0=3
MulW  sc   1 1 data out 0=3
"""
net = make_net(P_SCALE, {"MulW": MulW}, struct.pack("<3f", 2, 3, 4))
print("weights", values(run(net, {"data": mat(1, 1, 1)})))

P_MULTI = """7767517
3 4
Input   a  0 1 a 0=3
Input   b  0 1 b 0=3
SumDiff sd 2 2 a b out diff
"""
net = make_net(P_MULTI, {"SumDiff": SumDiff})
ex = net.create_extractor()
ex.input("a", mat(5, 6, 7))
ex.input("b", mat(1, 2, 3))
print("multi", values(ex.extract("out")), values(ex.extract("diff")))


# Replacing a built-in type, by name and by type index.
class MyReLU(Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def forward_inplace(self, blob, opt):
        for i in range(blob.w):
            blob[i] = 100.0 if blob[i] > 0 else -100.0


P_RELU = """7767517
2 2
Input data 0 1 data 0=3
ReLU  r    1 1 data out
"""
for key in ("ReLU", Layer.type_to_index("ReLU")):
    net = make_net(P_RELU, {key: MyReLU})
    print("replaced", key, values(run(net, {"data": mat(-1, 0.5, 2)})))
print("builtin again", values(run(make_net(P_RELU, {}), {"data": mat(-1, 0.5, 2)})))

# A creator may be any callable returning a new instance.
made = []


def creator():
    layer = AddBias()
    made.append(layer)
    return layer


net = make_net(P_CHAIN, {"AddBias": creator, "Double": Double, "Head2": Head2})
print("callable creator", len(made), values(run(net, {"data": mat(0, 0, 0, 0)})))


# Inside callbacks the layer describes itself, and collecting garbage is safe.
class Introspect(Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def load_param(self, pd):
        gc.collect()
        print("  load_param", self.name, self.type, self.bottoms, self.tops, self.one_blob_only, self.support_inplace)

    def create_pipeline(self, opt):
        gc.collect()
        print("  create_pipeline", type(opt).__name__)

    def forward_inplace(self, blob, opt):
        gc.collect()
        print("  forward_inplace", blob.w, self.name)


net = make_net("7767517\n2 2\nInput data 0 1 data 0=2\nIntrospect me 1 1 data out\n", {"Introspect": Introspect})
print("introspect", values(run(net, {"data": mat(7, 8)})))


# Lent objects expire when the callback returns.
class Keeper(Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def load_param(self, pd):
        self.pd = pd

    def load_model(self, mb):
        self.mb = mb

    def forward_inplace(self, blob, opt):
        self.blob = blob
        self.opt = opt


net = make_net("7767517\n2 2\nInput data 0 1 data 0=2\nKeeper k 1 1 data out\n", {"Keeper": Keeper}, b"")
run(net, {"data": mat(1, 2)})
k = Keeper  # the instance is reached through a fresh net below
kept = []


class Keeper2(Keeper):
    def __init__(self):
        super().__init__()
        kept.append(self)


net = make_net("7767517\n2 2\nInput data 0 1 data 0=2\nKeeper2 k 1 1 data out\n", {"Keeper2": Keeper2})
run(net, {"data": mat(1, 2)})
kk = kept[0]
check("kept Mat", lambda: kk.blob[0])
check("kept Mat repr", lambda: print(" ", kk.blob))
check("kept ParamDict", lambda: kk.pd.get(0, 0))
check("kept ModelBin", lambda: kk.mb.load(1, 1))
check("kept Option", lambda: kk.opt.num_threads)


# One Option wrapper serves the forwards of an extract (ncnn hands every layer the same
# option): one kept by an earlier layer works in a later layer's callback, and is the
# object that layer gets. A layer with a featmask (param 31) gets a masked copy: another
# Option, and the one kept before it has expired by then.
opts = []


class OptKeeper(Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def forward_inplace(self, blob, opt):
        if not opts:  # ncnn's blob is not the layer's to give back
            check("  release() of the blob ncnn lent", blob.release)
            print("  the blob after it", blob.w, blob.dims)
        if opts:
            first = opts[0]
            print("  same Option as the first layer's:", opt is first)
            check("  first layer's Option here", lambda: print("  num_threads", first.num_threads))
        opts.append(opt)


def option_keepers():  # in a function: its results do not linger in the module's frame
    net = make_net("7767517\n4 4\nInput data 0 1 data 0=2\nOptKeeper a 1 1 data x\nOptKeeper b 1 1 x y\n"
                   "OptKeeper c 1 1 y out 31=1\n", {"OptKeeper": OptKeeper})
    net.opt.num_threads = 1
    run(net, {"data": mat(1, 2)})
    check("Option kept past the extract", lambda: opts[1].num_threads)
    check("masked Option kept past the extract", lambda: opts[2].num_threads)
    opts.clear()
    run(net, {"data": mat(1, 2)})  # a new extract: a new Option


option_keepers()


# Every failure: an exception from the public call that entered ncnn, with the layer named.
def failing(where, exc=ValueError("boom"), code=None, **flags):
    class Failing(Layer):
        def __init__(self):
            if where == "__init__":
                raise exc
            super().__init__()
            self.one_blob_only = True
            self.support_inplace = flags.get("support_inplace", False)

        def load_param(self, pd):
            if where == "load_param":
                raise exc
            return code if where == "load_param code" else 0

        def load_model(self, mb):
            if where == "load_model":
                raise exc

        def create_pipeline(self, opt):
            if where == "create_pipeline":
                raise exc

        def forward(self, bottom, opt):
            if where == "forward":
                raise exc
            if where == "forward code":
                return code
            return bottom.clone()

    if flags.get("no_forward"):
        del Failing.forward
    return Failing


P_ONE = "7767517\n2 2\nInput data 0 1 data 0=2\nFailing f 1 1 data out\n"
for where in ("__init__", "load_param", "load_model", "create_pipeline"):
    check("raise in " + where, lambda: make_net(P_ONE, {"Failing": failing(where)}))
check("load_param returns -7", lambda: make_net(P_ONE, {"Failing": failing("load_param code", code=-7)}))
check("load_param returns str", lambda: make_net(P_ONE, {"Failing": failing("load_param code", code="x")}))
net = make_net(P_ONE, {"Failing": failing("forward")})
check("raise in forward", lambda: run(net, {"data": mat(1, 2)}))
check("same net again", lambda: run(net, {"data": mat(1, 2)}))
net = make_net(P_ONE, {"Failing": failing("forward", exc=KeyboardInterrupt())})
try:
    run(net, {"data": mat(1, 2)})
except KeyboardInterrupt:
    print("KeyboardInterrupt in forward -> KeyboardInterrupt from extract")
check("support_inplace without forward_inplace", lambda: make_net(P_ONE, {"Failing": failing("x", support_inplace=True)}))
check("no forward at all", lambda: make_net(P_ONE, {"Failing": failing("x", no_forward=True)}))
check("creator returns int", lambda: make_net(P_ONE, {"Failing": lambda: 3}))
check("creator returns a built-in layer", lambda: make_net(P_ONE, {"Failing": lambda: Layer("ReLU")}))
same = Head2()
P_TWO = "7767517\n3 3\nInput data 0 1 data 0=2\nFailing f 1 1 data out\nFailing g 1 1 out out2\n"
check("creator returns one instance twice", lambda: make_net(P_TWO, {"Failing": lambda: same}))


def bad_forward(result):
    class Bad(Layer):
        def __init__(self):
            super().__init__()
            self.one_blob_only = True

        def forward(self, bottom, opt):
            return bottom if result == "bottom" else result

    return Bad


for label, result in (("bottom", "bottom"), ("None", None), ("0", 0), ("-100", -100), ("empty Mat", ncnn_mp.Mat()), ("two Mats", (mat(1), mat(2)))):
    net = make_net(P_ONE, {"Failing": bad_forward(result)})
    check("forward returns " + label, lambda: run(net, {"data": mat(1, 2)}))


class NoFill(Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, top, opt):
        return 0


check("top left empty", lambda: run(make_net(P_ONE, {"Failing": NoFill}), {"data": mat(1, 2)}))
check("register a non-callable", lambda: ncnn_mp.Net().register_custom_layer("X", 3))
check("register with a float type", lambda: ncnn_mp.Net().register_custom_layer(1.5, Head2))
check("register an empty name", lambda: ncnn_mp.Net().register_custom_layer("", Head2))

# Standalone: a Layer subclass is a plain Python object too.
print("standalone", values(Head2().forward(mat(4, 5, 6), ncnn_mp.Option())))

# Nothing leaks: Nets made and dropped in a loop leave no Python layer behind. What the
# sections above still hold is dropped first (ex holds the SumDiff net), so that only
# stale words can keep a Net alive: the module's own value stack (not cleared as it
# pops) and the C stack, which differ with the build and the folder it runs from.
del net, same, made, kept, kk, ex, opts


def one_net(clear):
    net = make_net(P_CHAIN, {"AddBias": AddBias, "Double": Double, "Head2": Head2})
    run(net, {"data": mat(0, 1, 2, 3)})
    net.clear() if clear else None


def churn(n):
    for i in range(n):
        one_net(i % 2)
    return settle()  # no Net of the loop is reachable here


before = churn(5)
after = churn(50)
print("no growth over 50 nets", judged("live layers after 50 nets", after, before + 3 * STALE_NETS),
      judged("live layers before", before, 3 * STALE_NETS))  # 3 Python layers a net


# MemoryError inside a callback: the same exception from extract, and the Net lives on.
class Hungry(Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, opt):
        micropython.heap_lock()
        try:
            return [0] * 1000  # allocation fails while the heap is locked
        finally:
            micropython.heap_unlock()


net = make_net(P_ONE, {"Failing": Hungry})
try:
    run(net, {"data": mat(1, 2)})
except MemoryError:  # no message on ports without an emergency exception buffer (qemu)
    print("MemoryError in forward -> MemoryError")

# A Net whose load failed in a Python layer loads again, with a working class, and runs.
net = ncnn_mp.Net()
net.register_custom_layer("Failing", failing("load_model"))
net.load_param_mem(P_ONE)
check("load_model fails", lambda: net.load_model(b""))
net.clear()  # a net's types are fixed while it has layers: ncnn destroys each with its type's destroyer
net.register_custom_layer("Failing", Double)
net.load_param_mem(P_ONE)
net.load_model(b"")
print("same Net reloaded", values(run(net, {"data": mat(1, 2)})))


# Blob shapes (the .param's -23330 hints) are there from create_pipeline on.
class Shapes(Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def load_param(self, pd):
        check("  shape during load_param", lambda: self.get_bottom_shape(0))

    def create_pipeline(self, opt):
        print("  shapes in create_pipeline", self.get_bottom_shape(0), self.get_top_shape(0))

    def forward_inplace(self, blob, opt):
        pass


make_net("7767517\n2 2\nInput data 0 1 data -23330=4,3,4,5,6 0=4 1=5 2=6\nShapes s 1 1 data out -23330=4,3,4,5,6\n",
         {"Shapes": Shapes})


# A top of other elements than float32 (the layers after it read float32): refused, naming
# the method; the Net runs again with a layer that returns float32.
class Int8Top(Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, opt):
        return ncnn_mp.Mat(bottom.w, elemsize=1)


net = make_net("7767517\n3 3\nInput data 0 1 data 0=2\nInt8Top t 1 1 data mid\nSoftmax s 1 1 mid out\n",
               {"Int8Top": Int8Top})
check("int8 top", lambda: run(net, {"data": mat(1, 2)}))
Int8Top.forward = lambda self, bottom, opt: bottom.clone()
print("float32 top", values(run(net, {"data": mat(1, 2)})))

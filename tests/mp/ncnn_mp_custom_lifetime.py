# SPDX-License-Identifier: MIT
# Custom-layer lifetimes, after the CPython ncnn wheel's own tests: repeated nets, 20
# live nets, re-registration, creators returning nothing, long type names, a Net dying
# before or after its Extractors, and exceptions from destroy_pipeline.
import gc

import ncnn_mp
from mptest import STALE_NETS, check, judged, require, settle

require("NCNN_STRING")  # layer and blob names


class Plus(ncnn_mp.Layer):
    def __init__(self, k=1.0):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.k = k

    def forward_inplace(self, blob, opt):
        blob[0] += self.k


def param(type_name):
    return "7767517\n2 2\nInput data 0 1 data 0=1\n%s p 1 1 data out\n" % type_name


def net_with(type_name, creator):
    net = ncnn_mp.Net()
    net.register_custom_layer(type_name, creator)
    net.load_param_mem(param(type_name))
    net.load_model(b"")
    return net


def first(net):
    ex = net.create_extractor()
    x = ncnn_mp.Mat(1)
    x.fill(0)
    ex.input("data", x)
    return ex.extract("out")[0]


def no_leak():
    # The GC scans the C stack conservatively: stale words may keep a few nets alive.
    left = settle() - base
    return "no leak" if judged("custom layers left", left, STALE_NETS) else "LEAK: %d left" % left


# Each scenario runs in a function: temporaries left in the module's own frame (its
# value stack is not cleared as it pops) would be scanned by the conservative GC and
# could keep a dropped Net alive.
def repeated():
    print("repeated nets", sum(first(net_with("Plus", Plus)) for _ in range(100)))


def live():
    nets = [net_with("Plus", lambda i=i: Plus(i)) for i in range(20)]
    print("20 live nets", [first(n) for n in nets][::5], ncnn_mp.live_custom_layers() - base >= 20)
    # Emptied as well as dropped: one stale word for the list would keep all 20 alive. On the
    # ESP32's windowed core (the esp32core board) one did: a register a later frame never wrote
    # still held the list, and spilling that frame's window put it on the stack (found there at
    # 692 bytes from its top, above every frame scrub() can reach).
    nets.clear()


base = settle()
repeated()
print(no_leak())
live()
print(no_leak())


def scenarios():
    # Re-registration: the last creator registered for a type wins.
    net = ncnn_mp.Net()
    net.register_custom_layer("Plus", Plus)
    net.register_custom_layer("Plus", lambda: Plus(10))
    net.load_param_mem(param("Plus"))
    net.load_model(b"")
    print("re-registered", first(net))

    long_name = "L" * 255  # ncnn's param parser reads type names up to 255 characters
    print("long type name", first(net_with(long_name, Plus)))
    check("creator returns None", lambda: net_with("Plus", lambda: None))
    print("still fine", first(net_with("Plus", Plus)))

    # A Net dropped while its Extractor lives on, and the other way round.
    net = net_with("Plus", Plus)
    ex = net.create_extractor()
    del net
    gc.collect()
    x = ncnn_mp.Mat(1)
    x.fill(5)
    ex.input("data", x)
    print("extractor outlives net", ex.extract("out")[0])
    del ex
    net = net_with("Plus", Plus)
    ex = net.create_extractor()
    del ex
    gc.collect()
    print("net outlives extractor", first(net))
    del net


scenarios()
print(no_leak())


class Teardown(Plus):
    def destroy_pipeline(self, opt):
        raise OSError("cannot release")


net = net_with("Teardown", Teardown)
check("destroy_pipeline raises, from clear", lambda: net.clear())
print("cleared anyway", net.input_count, no_leak())

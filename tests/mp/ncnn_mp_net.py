# SPDX-License-Identifier: MIT
# Net and Extractor on the project's digits model: loading every way, inference, lifetimes.
import gc

import ncnn_mp
from mptest import *  # noqa: F401,F403

require("NCNN_STRING", "NCNN_STDIO")  # layer and blob names, files


param, model = DIGITS_PARAM, DIGITS_MODEL
param_text, weights = read(param), read(model)
first = read(DIGITS + "/digits_test.bin")[:64]  # the first test image


def image():
    m = ncnn_mp.Mat(8, 8, 1)
    for i in range(64):
        m[i] = first[i]
    return m


def values(mat):
    return list(memoryview(mat))


def scores(net):
    ex = net.create_extractor()
    ex.input("data", image())
    return values(ex.extract("prob"))


def close(a, b):
    # Layouts (packing, threads) change the summation order: compare with a tolerance.
    return len(a) == len(b) and max(abs(x - y) for x, y in zip(a, b)) < 1e-5



net = digits_net()
net.opt.num_threads = 1
print(net, net.input_count, net.output_count)
net.load_param(param)
net.load_model(model)
print(net, net.input_names(), net.output_names())
print(net.get_input_name(0), net.get_output_name(0), net.get_input_index(0), net.get_output_index(0))
ref = scores(net)
print(len(ref), max(ref) == ref[2], abs(sum(ref) - 1) < 1e-5)

# The same model from a buffer, through DataReaders, and with the CPython ncnn names.
loads = {
    "buffers": lambda n: (n.load_param(param_text), n.load_model(weights)),
    "memoryviews": lambda n: (n.load_param(memoryview(param_text)), n.load_model(memoryview(weights))),
    "mem names": lambda n: (n.load_param_mem(param_text.decode()), n.load_model_mem(weights)),
    "DataReader memory": lambda n: (n.load_param(ncnn_mp.DataReader(from_memory=param_text)),
                                    n.load_model(ncnn_mp.DataReader(from_memory=weights))),
    "DataReader stdio": lambda n: (n.load_param(ncnn_mp.DataReader(from_stdio=param)),
                                   n.load_model(ncnn_mp.DataReader(from_stdio=model))),
    "DataReader file": lambda n: (n.load_param(ncnn_mp.DataReader(from_stdio=open(param, "rb"))),
                                  n.load_model(ncnn_mp.DataReader(from_stdio=open(model, "rb")))),
}
for name, load in loads.items():
    n = digits_net()
    n.opt.num_threads = 1
    load(n)
    print(name, close(scores(n), ref))

# Weightless: the structure with all-zero weights gives the uniform softmax.
z = digits_net()
z.load_param(param)
z.load_model(ncnn_mp.DataReader(zeros=True))
print("zeros", close(scores(z), [0.1] * 10))

# An Extractor keeps its Net alive; the result keeps working after both are dropped.
ex = digits_net()
ex.load_param(param)
ex.load_model(model)
ex = ex.create_extractor()
gc.collect()
ex.input("data", image())
out = ex.extract("prob")
del ex
gc.collect()
print("extractor outlives net", close(values(out), ref))

# Input by index, extract by index.
ex = net.create_extractor()
ex.input(net.get_input_index(0), image())
print("by index", close(values(ex.extract(net.get_output_index(0))), ref))

# set_option: the Extractor is made again with the Option; inputs given so far are kept.
ex = net.create_extractor()
ex.input("data", image())
opt = ncnn_mp.Option()
opt.num_threads = 2
opt.use_local_pool_allocator = False
ex.set_option(opt)
print("set_option", close(values(ex.extract("prob")), ref))
# Flags the layers baked in at load time cannot change afterwards (ncnn would compute garbage).
opt.use_packing_layout = False
check("set_option packing", lambda: ex.set_option(opt))
check("net.opt packing after load", lambda: setattr(net.opt, "use_packing_layout", False))
check("net.opt = Option with other packing", lambda: setattr(net, "opt", opt))
net.opt.use_packing_layout = True  # unchanged value: allowed

# Allocators on the net's option and on an extractor's.
pool = ncnn_mp.Allocator()
work = ncnn_mp.Allocator(unlocked=True)
net.opt.set_blob_allocator(pool)
net.opt.set_workspace_allocator(work)
print("net allocators", close(scores(net), ref))
del pool, work
gc.collect()
print("allocators dropped by Python, still held by the net", close(scores(net), ref))
net.opt.set_blob_allocator(None)
net.opt.set_workspace_allocator(None)

# Assigning an Option copies it into the net (before loading: see above).
o = ncnn_mp.Option()
o.num_threads = 1
o.use_winograd_convolution = False
fresh = digits_net()
fresh.opt = o
o.num_threads = 3  # a copy: the net does not follow
print("opt assigned", fresh.opt.use_winograd_convolution, fresh.option.num_threads)
fresh.load_param(param)
fresh.load_model(model)
print("loaded with it", close(scores(fresh), ref))

# clear / reload: old Extractors refuse to run, new ones work.
old = net.create_extractor()
net.clear()
print("cleared", net.input_count)
check("old extractor after clear", lambda: old.input("data", image()))
check("extract on empty net", lambda: net.create_extractor().extract("prob"))
net.load_param(param)
# ncnn would run layers whose weights and pipelines were never set up, and crash.
check("extract without load_model", lambda: net.create_extractor())
check("weights cut short", lambda: net.load_model(weights[:64]))
check("extract after a failed load_model", lambda: net.create_extractor())
net.load_model(model)
check("old extractor after reload", lambda: old.extract("prob"))
print("reloaded", close(scores(net), ref))

# with blocks release at once.
with net.create_extractor() as e:
    e.input("data", image())
    print("with", close(values(e.extract("prob")), ref))
check("closed extractor", lambda: e.extract("prob"))
with ncnn_mp.Allocator() as a:
    pass
check("closed allocator", lambda: ncnn_mp.Mat(2, allocator=a))
with digits_net() as n:
    n.load_param(param)
    n.load_model(model)
    survivor = n.create_extractor()
check("closed Net", lambda: n.create_extractor())
print("closed", repr(n))
survivor.input("data", image())
print("an Extractor outlives its closed Net", close(values(survivor.extract("prob")), ref))
n.close()  # twice is fine
print("OK")

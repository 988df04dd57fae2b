# SPDX-License-Identifier: MIT
# Net, Extractor, DataReader, Option, Allocator: every misuse raises, the Net stays usable.
import gc

import ncnn_mp
from mptest import *  # noqa: F401,F403

require("NCNN_STRING")  # layer and blob names


param, model = DIGITS_PARAM, DIGITS_MODEL
param_text, weights = read(param), read(model)



net = digits_net()
check("missing param file", lambda: net.load_param("/nonexistent/x.param"))
check("missing model file", lambda: net.load_model("/nonexistent/x.bin"))
check("param not text", lambda: net.load_param(b"\x00\x01garbage"))
check("param wrong magic", lambda: net.load_param(b"1234\n1 1\nInput data 0 1 data\n"))
check("param unknown layer", lambda: net.load_param(b"7767517\n1 1\nNoSuchLayer x 0 1 data\n"))
check("param int", lambda: net.load_param(42))
check("param None", lambda: net.load_param(None))
check("param_bin garbage", lambda: net.load_param_bin(b"\x01\x02\x03"))
check("load_model_mem str", lambda: net.load_model_mem("x"))
check("load_param_mem int", lambda: net.load_param_mem(3))
net.load_param(param_text)
check("truncated weights", lambda: net.load_model(weights[:100]))
check("empty weights", lambda: net.load_model(b""))
check("weights cut inside fc1", lambda: net.load_model(weights[:600]))
net.load_model(weights)

ex = net.create_extractor()
check("extract before input", lambda: ex.extract("prob"))
check("input empty Mat", lambda: ex.input("data", ncnn_mp.Mat()))
check("input not a Mat", lambda: ex.input("data", [1, 2]))
check("input int8 Mat", lambda: ex.input("data", ncnn_mp.Mat(8, 8, 1, elemsize=1)))
check("input unknown blob", lambda: ex.input("nope", ncnn_mp.Mat(8, 8, 1)))
check("input blob index out of range", lambda: ex.input(99, ncnn_mp.Mat(8, 8, 1)))
check("input negative index", lambda: ex.input(-1, ncnn_mp.Mat(8, 8, 1)))
check("input float key", lambda: ex.input(1.5, ncnn_mp.Mat(8, 8, 1)))
m = ncnn_mp.Mat(8, 8, 1)
m.fill(1)
ex.input("data", m)
check("extract unknown blob", lambda: ex.extract("nope"))
check("extract index out of range", lambda: ex.extract(1000))
check("extract None", lambda: ex.extract(None))
check("set_option not Option", lambda: ex.set_option(1))
check("get_input_name out of range", lambda: net.get_input_name(1))
check("get_output_index negative", lambda: net.get_output_index(-1))
check("get_input_index str", lambda: net.get_input_index("0"))
check("opt = int", lambda: setattr(net, "opt", 3))
check("num_threads 0", lambda: setattr(ncnn_mp.Option(), "num_threads", 0))
check("num_threads str", lambda: setattr(ncnn_mp.Option(), "num_threads", "2"))
check("blob allocator str", lambda: ncnn_mp.Option().set_blob_allocator("a"))
check("seqlen negative", lambda: ncnn_mp.Option().set_kvcache_max_seqlen_hint(-1))
check("Allocator positional junk", lambda: ncnn_mp.Allocator(1, 2))
check("DataReader no source", lambda: ncnn_mp.DataReader())
check("DataReader two sources", lambda: ncnn_mp.DataReader(zeros=True, from_memory=b""))
check("DataReader missing file", lambda: ncnn_mp.DataReader(from_stdio="/nonexistent"))
check("DataReader memory int", lambda: ncnn_mp.DataReader(from_memory=5))
dr = ncnn_mp.DataReader(from_memory=b"x")
dr.close()
check("closed DataReader", lambda: net.load_model(dr))
check("Net args", lambda: ncnn_mp.Net(1))
check("Option args", lambda: ncnn_mp.Option(1))

# After all that, the same Net still gives the right answer.
gc.collect()
out = ex.extract("prob")
again = net.create_extractor()
again.input("data", m)
fresh = again.extract("prob")  # a name on it: a memoryview does not keep its Mat alive
print("healthy", list(memoryview(out)) == list(memoryview(fresh)), out.w)

# SPDX-License-Identifier: MIT
# Option and Allocator: every flag, the thread count, allocators, views of a Net's option.
import gc

import ncnn_mp
from mptest import check

FLAGS = ("use_vulkan_compute", "use_local_pool_allocator", "use_winograd_convolution", "use_sgemm_convolution",
         "use_packing_layout", "use_fp16_packed", "use_fp16_storage", "use_fp16_arithmetic", "use_int8_packed",
         "use_int8_storage", "use_int8_arithmetic", "use_int16_packed", "use_int16_storage", "use_bf16_packed",
         "use_bf16_storage", "use_shader_local_memory", "use_cooperative_matrix")

o = ncnn_mp.Option()
print("defaults", [int(getattr(o, f)) for f in FLAGS], o.num_threads >= 1)
GPU = ("use_vulkan_compute", "use_shader_local_memory", "use_cooperative_matrix")
for f in FLAGS:
    if f in GPU:  # below: this ncnn has no Vulkan
        continue
    before = getattr(o, f)
    setattr(o, f, not before)
    assert getattr(o, f) == (not before), f
    setattr(o, f, before)
print("every flag flips and back")
o.num_threads = 3
print("num_threads", o.num_threads, repr(o))

a, b, k = ncnn_mp.Allocator(), ncnn_mp.Allocator(unlocked=True), ncnn_mp.Allocator()
print(repr(a), repr(b))
o.set_blob_allocator(a)
o.set_workspace_allocator(b)
o.set_kvcache_allocator(k)
o.set_kvcache_max_seqlen_hint(128)
a.close()  # the Option still holds ncnn's allocator: using it stays safe
print("closed Allocator", repr(a))
m = ncnn_mp.Mat(4, 4, 2)
m.fill(1)
f = m.flatten(o)
print("flatten with the Option's allocators", f.w * f.elempack, f.dims)
o.set_blob_allocator(None)

net = ncnn_mp.Net()
view = net.opt
view.num_threads = 2
view.use_packing_layout = False
print("view", net.option.num_threads, net.opt.use_packing_layout, repr(view))
del net
gc.collect()
print("a view keeps its Net's option", view.num_threads)

with ncnn_mp.Allocator() as scoped:
    x = ncnn_mp.Mat(8, allocator=scoped)
    x.fill(2)
print("Mat outlives its Allocator's with block", x[7], repr(scoped))

for f in GPU:
    check(f + " without Vulkan", lambda: setattr(o, f, True))
    setattr(o, f, False)  # off is fine
check("num_threads float", lambda: setattr(o, "num_threads", 1.5))
check("num_threads 2000", lambda: setattr(o, "num_threads", 2000))
# (each worker is a thread of libgomp's with its own stack: one it cannot create ends the process)
check("num_threads 65", lambda: setattr(o, "num_threads", 65))
o.num_threads = 64
print("num_threads 64", o.num_threads)
check("unknown attribute", lambda: o.no_such_flag)
check("blob allocator int", lambda: o.set_blob_allocator(1))
check("closed Allocator given", lambda: o.set_workspace_allocator(a))
check("seqlen str", lambda: o.set_kvcache_max_seqlen_hint("1"))
print("positional unlocked", repr(ncnn_mp.Allocator(True)))
check("Allocator two arguments", lambda: ncnn_mp.Allocator(True, 1))
print("healthy", ncnn_mp.Option().num_threads >= 1)

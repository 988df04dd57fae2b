# SPDX-License-Identifier: MIT
# Layer on its own: built-in types by name and index, params and weights through
# ParamDict and ModelBin, one and several blobs, in place; and every misuse.
import struct

import ncnn_mp
from mptest import check, mat, require
from mptest import packed as values

require("NCNN_STRING")  # layer and blob names

Layer, Mat = ncnn_mp.Layer, ncnn_mp.Mat
opt = ncnn_mp.Option()
opt.num_threads = 1


relu = Layer("ReLU")
print(relu, relu.one_blob_only, relu.support_inplace, relu.typeindex == Layer.type_to_index("ReLU"))
print("forward", values(relu.forward(mat(-1, 2, -3), opt)))
x = mat(-1, 2, -3)
relu.forward_inplace(x, opt)
print("forward_inplace", values(x))
print("by index", values(Layer(typeindex=Layer.type_to_index("AbsVal")).forward(mat(-1, 2), opt)))
print("type_to_index of nothing", Layer.type_to_index("NoSuchType"))

# InnerProduct with weights from a ModelBin over Mats: y = W x + b.
ip = Layer(type="InnerProduct")
pd = ncnn_mp.ParamDict()
pd.set(0, 2)  # num_output
pd.set(1, 1)  # bias_term
pd.set(2, 6)  # weight_data_size
ip.load_param(pd)
w = Mat(6)
for i, v in enumerate([1, 2, 3, 4, 5, 6]):
    w[i] = v
ip.load_model(ncnn_mp.ModelBin(from_mat_array=[w, mat(0.5, -0.5)]))
print("InnerProduct", values(ip.forward(mat(1, 1, 1), opt)))

# The same weights through a DataReader: ncnn's tagged format (type 0) and raw (type 1).
dr = ncnn_mp.DataReader(from_memory=struct.pack("<I6f2f", 0, 1, 2, 3, 4, 5, 6, 0.5, -0.5))
ip2 = Layer("InnerProduct")
ip2.load_param(pd)
ip2.load_model(ncnn_mp.ModelBin(from_datareader=dr))
print("from a DataReader", values(ip2.forward(mat(1, 1, 1), opt)))
mb = ncnn_mp.ModelBin(from_datareader=ncnn_mp.DataReader(from_memory=struct.pack("<4f", 1, 2, 3, 4)))
print("ModelBin.load", values(mb.load(2, 1)), values(mb.load(1, 2, 1)))
check("ModelBin past the end", lambda: mb.load(1, 1))

# Several bottoms and tops: Concat and Slice.
cat = Layer("Concat")
print("Concat", [values(t) for t in cat.forward([mat(1, 2), mat(3)], 1, opt)])
sl = Layer("Slice")
p = ncnn_mp.ParamDict()
# slices: 2 elements, then the rest (-233); an int array: int32 bits, padded to 16 bytes
p.set(0, Mat(2, data=bytearray(struct.pack("<4i", 2, -233, 0, 0)), elemsize=4))
sl.load_param(p)
print("Slice", [values(t) for t in sl.forward([mat(1, 2, 3, 4, 5)], 2, opt)])

# The shape guard (as in a Net's extract): an input that does not fit the layer's weights
# is refused before ncnn reads past them; the layer works on after it.
check("InnerProduct given 4 values", lambda: ip.forward(mat(1, 2, 3, 4), opt))
check("Concat of a vector and a 2-D Mat", lambda: cat.forward([mat(1, 2), Mat(2, 2)], 1, opt))
bias = Layer("Bias")
bp = ncnn_mp.ParamDict()
bp.set(0, 2)  # bias_data_size: one per channel
bias.load_param(bp)
bias.load_model(ncnn_mp.ModelBin(from_mat_array=[mat(10, 20)]))
three = Mat(1, 1, 3)
three.fill(1.0)
check("Bias of 2 channels given 3, in place", lambda: bias.forward_inplace(three, opt))
print("InnerProduct after", values(ip.forward(mat(1, 1, 1), opt)))
print("flags", relu.bottom_count, relu.top_count, relu.bottoms, relu.tops, repr(relu.name))

check("unknown type", lambda: Layer("NoSuchLayer"))
check("unknown index", lambda: Layer(typeindex=100000))
check("type and index", lambda: Layer("ReLU", typeindex=1))
check("type not str", lambda: Layer(5))
check("InnerProduct without weights", lambda: Layer("InnerProduct").forward(mat(1), opt))
fresh = Layer("InnerProduct")
check("load_model before load_param", lambda: fresh.load_model(ncnn_mp.ModelBin(from_mat_array=[])))
fresh.load_param(pd)
check("too few weights", lambda: fresh.load_model(ncnn_mp.ModelBin(from_mat_array=[])))
# ncnn would read 6 weights from a 3-element Mat: the ModelBin refuses to hand it over.
check("weights of the wrong size", lambda: fresh.load_model(ncnn_mp.ModelBin(from_mat_array=[mat(1, 2, 3), mat(0, 0)])))
check("forward an empty Mat", lambda: relu.forward(Mat(), opt))
check("forward not a Mat", lambda: relu.forward(3, opt))
check("forward no Option", lambda: relu.forward(mat(1), None))
check("forward wrong arity", lambda: relu.forward(mat(1), 2, opt))
check("forward_inplace on bytes", lambda: relu.forward_inplace(Mat(4, data=bytes(16)), opt))
check("inplace unsupported", lambda: Layer("InnerProduct").forward_inplace(mat(1), opt))
opt2 = ncnn_mp.Option()
opt2.use_packing_layout = False
check("other pipeline flags", lambda: relu.forward(mat(1), opt2))
check("pipeline twice", lambda: relu.create_pipeline(opt))
check("get_bottom on a lone layer", lambda: relu.get_bottom(0))
check("get_top_shape on a lone layer", lambda: relu.get_top_shape(0))
check("ModelBin no source", lambda: ncnn_mp.ModelBin())
check("ModelBin both sources", lambda: ncnn_mp.ModelBin(from_mat_array=[], from_datareader=dr))
check("ModelBin bad array", lambda: ncnn_mp.ModelBin(from_mat_array=[w, 3]))
check("ModelBin bad type", lambda: mb.load(1, 5))
check("ModelBin zero size", lambda: mb.load(0, 1))
check("ParamDict id 32", lambda: pd.get(32, 0))
check("ParamDict id -1", lambda: pd.set(-1, 1))
check("ParamDict bad value", lambda: pd.set(1, "x"))
check("ParamDict bad default", lambda: pd.get(0, "x"))
print("ParamDict", pd.get(0, 0), pd.get(9, 1.5), pd.get_type(0), pd.get(9), pd.get_array(0), p.get(0).w)
relu.destroy_pipeline(opt)
print("healthy", values(relu.forward(mat(-5, 5), opt)))

# A standalone forward hands ncnn the Mat as it is (a Net converts each bottom to what its
# layer takes first): elements a layer does not take are refused, not read as float32 past
# their end (a Sigmoid given an int8 Mat segfaulted).
check("Sigmoid on an int8 Mat", lambda: Layer("Sigmoid").forward(Mat(16, 2, 3, elemsize=1), opt))
check("TanH on int8 Mats", lambda: Layer("TanH").forward([Mat(8, elemsize=1)], 1, opt))
check("Sigmoid in place on an int8 Mat", lambda: Layer("Sigmoid").forward_inplace(Mat(64, elemsize=1), opt))
x4 = mat(*range(-4, 4)).reshape(2, 1, 4).convert_packing(4, opt)
flat = ncnn_mp.Option()
flat.num_threads = 1
flat.use_packing_layout = False
check("ReLU on elempack 4 without use_packing_layout", lambda: Layer("ReLU").forward(x4, flat))
relu4 = Layer("ReLU")
relu4.load_param(ncnn_mp.ParamDict())
relu4.create_pipeline(opt)
try:  # computed where this build's ReLU takes packed Mats (x86), refused where not (MCUs)
    y4 = relu4.forward(x4, opt)
    ok = (y4.elempack, values(y4.convert_packing(1, opt))) == (4, [0.0] * 5 + [1.0, 2.0, 3.0])
    got = "computed" if ok else "wrong values"
except ValueError as e:
    got = "refused" if "elempack 1" in str(e) else str(e)
print("ReLU on elempack 4 with use_packing_layout: as its support_packing says",
      got == ("computed" if relu4.support_packing else "refused"))

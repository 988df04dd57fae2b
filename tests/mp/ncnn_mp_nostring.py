# SPDX-License-Identifier: MIT
# An ncnn built with NCNN_STRING=OFF and a few layers only (the qemu-nostring profile):
# what needs names, files or a left-out layer raises NotImplementedError naming the
# missing option; the rest works by index (see ncnn_mp_param_bin.py for inference).
import ncnn_mp
from mptest import DIGITS, DIGITS_MODEL, Standardize, check, read

info = ncnn_mp.build_info()
if info["NCNN_STRING"] or info["NCNN_STDIO"]:
    print("SKIP: for ncnn built with NCNN_STRING=OFF and NCNN_STDIO=OFF")
    raise SystemExit

net = ncnn_mp.Net()
check("register by name", lambda: net.register_custom_layer("Standardize", Standardize))
check("load_param text", lambda: net.load_param(ncnn_mp.DataReader(from_memory=read(DIGITS + "/digits.param"))))
check("load_param path", lambda: net.load_param("digits.param"))
check("load_model path", lambda: net.load_model("digits.bin"))
check("DataReader from_stdio", lambda: ncnn_mp.DataReader(from_stdio="digits.bin"))
check("Layer by name", lambda: ncnn_mp.Layer("ReLU"))
check("type_to_index", lambda: ncnn_mp.Layer.type_to_index("ReLU"))

net.register_custom_layer(ncnn_mp.CUSTOM_BIT | 0, Standardize)
net.load_param_bin(read(DIGITS + "/digits.param.bin"))
net.load_model(read(DIGITS_MODEL))
print("input_names", net.input_names(), "input index", net.get_input_index(0))  # no names to give
ex = net.create_extractor()
check("input by name", lambda: ex.input("data", ncnn_mp.Mat(8, 8, 1)))
check("extract by name", lambda: ex.extract("prob"))
ex.input(0, ncnn_mp.Mat(8, 8, 1))
print("extract by index", ex.extract(5).w)
ex.close()

relu = ncnn_mp.Layer(typeindex=26)  # ReLU, by its number in ncnn's layer_type_enum.h
print("layer by index", relu.typeindex, relu.one_blob_only)
print("name and type of a layer", relu.name, relu.type)  # ncnn keeps none
check("left-out layer by index", lambda: ncnn_mp.Layer(typeindex=3))  # Bias is not built

# Mat helpers that run a built-in layer this build left out.
m = ncnn_mp.Mat(4, 4, 1)
m.fill(1.0)
opt = ncnn_mp.Option()
check("mean only (Bias)", lambda: m.substract_mean_normalize([1.0], None))
check("norm (Scale)", lambda: m.substract_mean_normalize(None, [2.0]))
check("cut border (Crop)", lambda: m.copy_cut_border(1, 1, 1, 1, opt))
print("make border (Padding)", m.copy_make_border(1, 1, 1, 1, 0, 0.0, opt).w)
print("flatten (Flatten)", m.flatten(opt).w)
print("live custom layers", ncnn_mp.live_custom_layers())
net.close()
print("after close", ncnn_mp.live_custom_layers())

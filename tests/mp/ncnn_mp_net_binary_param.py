# SPDX-License-Identifier: MIT
# A net loaded from a binary param (.param.bin) has blob numbers but no blob names.
import struct

import ncnn_mp
from mptest import check, mat, packed, require

require("NCNN_STRING")  # the layer type numbers come from their names

INPUT, RELU = ncnn_mp.Layer.type_to_index("Input"), ncnn_mp.Layer.type_to_index("ReLU")
# magic, 2 layers, 2 blobs; Input: no bottom, top 0; ReLU: bottom 0, top 1; -233 ends each layer's params.
param_bin = struct.pack("<15i", 7767517, 2, 2, INPUT, 0, 1, 0, -233, RELU, 1, 1, 0, 1, -233, 0)[:-4]

net = ncnn_mp.Net()
net.load_param_bin(param_bin)
net.load_model(ncnn_mp.DataReader(zeros=True))
print("counts", net.input_count, net.output_count)
print("indexes", net.get_input_index(0), net.get_output_index(0))
print("names", net.input_names(), net.output_names())
check("get_input_name", lambda: net.get_input_name(0))
check("get_output_name", lambda: net.get_output_name(0))
ex = net.create_extractor()
check("extract before input", lambda: ex.extract(1))
ex.input(0, mat(-1, 2))
print("relu", packed(ex.extract(1)))
# Text params name their blobs again.
net.load_param_mem("7767517\n2 2\nInput data 0 1 data\nReLU r 1 1 data out\n")
print("names after a text param", net.input_names(), net.output_names())
net.load_param_bin(param_bin)
print("names after a binary param", net.input_names())

# SPDX-License-Identifier: MIT
# What ncnn takes for granted while it runs a net, checked by ncnn_mp instead of crashing:
# blobs freed by lightmode, custom layers calling back into their own net, blob counts.
import gc

import ncnn_mp
from mptest import STALE_NETS, check, judged, mat, packed, require, settle

require("NCNN_STRING")  # layer and blob names


class Twice(ncnn_mp.Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, opt):
        out = bottom.clone()
        for i in range(len(out)):
            out[i] *= 2
        return out


def net_of(text, **types):
    net = ncnn_mp.Net()
    for name, cls in types.items():
        net.register_custom_layer(name, cls)
    net.load_param_mem(text)
    net.load_model(ncnn_mp.DataReader(zeros=True))
    return net


# ncnn frees the input blob once its consumer ran (lightmode); extracting a blob on the
# way afterwards runs the Input layer again, which needs the input back.
net = net_of("7767517\n3 3\nInput data 0 1 data\nReLU r 1 1 data a\nTwice t 1 1 a out\n", Twice=Twice)
ex = net.create_extractor()
ex.input("data", mat(-1, 2))
print("out", packed(ex.extract("out")))
print("a after out", packed(ex.extract("a")))
print("data after out", packed(ex.extract("data")))


class Calls(ncnn_mp.Layer):
    """forward_inplace runs `action` (a callable) from inside ncnn."""
    action = None

    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def forward_inplace(self, blob, opt):
        Calls.action()


net = net_of("7767517\n2 2\nInput data 0 1 data\nCalls c 1 1 data out\n", Calls=Calls)
ex = net.create_extractor()
ex.input("data", mat(1, 2))
for label, action in (
    ("clear", lambda: net.clear()),
    ("close", lambda: net.close()),
    ("load_param", lambda: net.load_param_mem("7767517\n1 1\nInput data 0 1 data\n")),
    ("load_model", lambda: net.load_model(ncnn_mp.DataReader(zeros=True))),
    ("register_custom_layer", lambda: net.register_custom_layer("X", Twice)),
    ("net.opt =", lambda: setattr(net, "opt", ncnn_mp.Option())),
    ("same extractor extract", lambda: ex.extract("out")),
    ("same extractor input", lambda: ex.input("data", mat(3))),
    ("same extractor close", lambda: ex.close()),
):
    Calls.action = action
    check("from forward: " + label, lambda: ex.extract("out"))


def other_extractor():
    with net.create_extractor() as other:
        other.input("data", mat(5))
        print("  another extractor of the net, from inside:", other.extract("data")[0])


Calls.action = other_extractor
ex.extract("out")
Calls.action = lambda: gc.collect()
print("still works", packed(ex.extract("out")))


# A custom layer's flags must fit the blobs the .param gives it.
class OneBlob(Twice):
    pass


class InplaceMany(ncnn_mp.Layer):
    def __init__(self):
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = True

    def forward_inplace(self, blobs, opt):
        pass


check("one_blob_only with 2 tops", lambda: net_of(
    "7767517\n3 3\nInput data 0 1 data\nOneBlob o 1 2 data a b\n", OneBlob=OneBlob))
check("one_blob_only without bottoms", lambda: net_of("7767517\n1 1\nOneBlob o 0 1 out\n", OneBlob=OneBlob))
check("in-place, 1 bottom 2 tops", lambda: net_of(
    "7767517\n2 3\nInput data 0 1 data\nInplaceMany m 1 2 data a b\n", InplaceMany=InplaceMany))
net = net_of("7767517\n3 5\nInput data 0 1 data\nSplit s 1 2 data a b\nInplaceMany m 2 2 a b c d\n",
             InplaceMany=InplaceMany)
with net.create_extractor() as ex:
    ex.input("data", mat(7))
    print("in-place, 2 bottoms 2 tops", packed(ex.extract("d")))
net.close()

# A type registered on a net that has layers already: ncnn would destroy the layers it
# made (a built-in ReLU here) with the new type's destroyer.
RELU_NET = "7767517\n2 2\nInput data 0 1 data\nReLU r 1 1 data out\n"
net = net_of(RELU_NET)
check("register over ReLU after load_param", lambda: net.register_custom_layer(ncnn_mp.Layer.type_to_index("ReLU"), Twice))
net.clear()
net.register_custom_layer(ncnn_mp.Layer.type_to_index("ReLU"), Twice)
net.load_param_mem(RELU_NET)
net.load_model(ncnn_mp.DataReader(zeros=True))
with net.create_extractor() as ex:
    ex.input("data", mat(-1, 2))
    print("ReLU replaced after clear()", packed(ex.extract("out")))
net.close()
print("custom layers alive at the end", judged("custom layers alive", settle(), STALE_NETS))

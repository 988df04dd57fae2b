# SPDX-License-Identifier: MIT
# Weights in place: Net.load_model(buf, copy=False) leaves the weights where they lie (a
# ROMFS file in the board's flash on the MCU, bytes here), reads no byte past the buffer,
# keeps the buffer alive while layers point into it, and refuses what it cannot keep safely.
import gc
import hashlib

import ncnn_mp
from mptest import DIGITS, DIGITS_MODEL, ON_MCU, check, getenv, judged, read, settle

DATA, PROB = 0, 5  # blob numbers of digits.param.bin (ncnn_mp_tools/param_to_bin.py)
images = read(DIGITS + "/digits_test.bin")
param = read(DIGITS + "/digits.param.bin")
IMAGES = 40
# The digits model's .bin: Standardize's 2 x 64 raw floats, fc1's tag + 32 x 64 floats and
# 32 raw biases, fc2's tag + 10 x 32 floats and 10 biases.
WEIGHT_BYTES = 4 * (128 + 2048 + 32 + 320 + 10)


class KeepWeights(ncnn_mp.Layer):
    """The digits model's Standardize, keeping the Mats its ModelBin hands out (no clone)."""

    def __init__(self):
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def load_param(self, pd):
        self.count = pd.get(0, 0)

    def load_model(self, mb):
        self.mean = mb.load(self.count, 1)
        self.scale = mb.load(self.count, 1)

    def forward_inplace(self, blob, opt):
        mean, scale = self.mean, self.scale
        for i in range(self.count):
            blob[i] = (blob[i] - mean[i]) * scale[i]


layers = []


def make_layer():
    layer = KeepWeights()
    layers.append(layer)
    return layer


def net_over(weights, copy):
    net = ncnn_mp.Net()
    net.register_custom_layer(ncnn_mp.CUSTOM_BIT | 0, make_layer)
    net.load_param_bin(param)
    net.load_model(weights, copy=copy)
    return net


def probs(net, n=IMAGES):
    out = []
    for i in range(n):
        x = ncnn_mp.Mat(8, 8, 1)
        for j in range(64):
            x[j] = images[i * 64 + j]
        with net.create_extractor() as ex:
            ex.input(DATA, x)
            out.append(bytes(memoryview(ex.extract(PROB))))  # the floats' bytes: compared exactly
    return out


weights = read(DIGITS_MODEL)  # on the MCU: a memoryview of the ROMFS file, in flash
# What the weights hold before any net reads them in place. (On the RISC-V board the flash is
# QEMU's CFI flash: a store there is read as a flash command, most are ignored, some change
# what reads return; on the Cortex-M board the region is RAM; here it is a bytes object.)
digest = hashlib.sha256(weights).digest()
# A copy in the heap, 16 bytes longer than the model needs; made first, while the board's
# 140 KiB heap still has room in one piece.
longer = bytearray(len(weights) + 16)
longer[:len(weights)] = weights
heap_copy = [bytes(longer)]
del longer
copied = net_over(weights, True)
in_place = net_over(weights, False)
reference = probs(copied)
print("in place gives the same floats", probs(in_place) == reference)
info, info_copied = in_place.weights_info(), copied.weights_info()
print("in place", info["in_place"] == WEIGHT_BYTES, "copied", info["copied"], "converted", info["converted"],
      "unused", info["unused"])
print("copying: in place", info_copied["in_place"], "copied", info_copied["copied"] == WEIGHT_BYTES + 8)
if info["ram"] is not None and info_copied["ram"] is not None:
    # ncnn's generic InnerProduct (the MCU's) keeps the weights where they lie; x86's
    # repacks them into RAM in create_pipeline, so only the MCU saves them all.
    saved = info_copied["ram"] - info["ram"]
    print("RAM saved", judged("RAM the in-place load saves, short of the weights",
                              (WEIGHT_BYTES if ON_MCU else 0) - saved, 64, " bytes"))
else:
    print("RAM saved", True)  # (valgrind's and the sanitizers' malloc report no heap figures)

print("-- the layer's Mats lie in the buffer: read-only, and they keep it alive")
mean = layers[-1].mean
check("write into an in-place weight", lambda: mean.fill(0.0))
first = mean[0]
in_place.clear()
in_place.close()
del in_place
settle()
print("after the net is gone, the Mat still reads", mean[0] == first)

print("-- the net alone keeps the buffer alive")


net = net_over(heap_copy.pop(), False)  # bytes in the heap, referenced by nothing else
print("16 bytes too many: unused", net.weights_info()["unused"])
layers.clear()  # (the layer's Mats would keep it too)
settle()
junk = [bytes(range(256)) * 4 for _ in range(20)]  # reuse whatever the collector freed
print("after a collection", probs(net, 10) == reference[:10])
del junk
settle()
free_before = gc.mem_free()
net.clear()  # the layers are gone: the buffer may go
layers.clear()
settle()
# (Under the sanitizers a stale word the stack scrub cannot reach may keep the buffer: the
# plain, valgrind and board runs judge this, as mptest.STALE_NETS says for Nets.)
print("clear() lets the buffer go", judged("heap freed by clear(), short of the weights",
                                           WEIGHT_BYTES + 8 + 16 - (gc.mem_free() - free_before),
                                           WEIGHT_BYTES + 24 if getenv("NCNN_MP_SANITIZED") else 512, " bytes"))
net.load_param_bin(param)
net.load_model(weights, copy=False)
print("reloaded", probs(net, 10) == reference[:10])

print("-- refused, and the net is untouched")
check("bytearray", lambda: net.load_model(bytearray(16), copy=False))
check("memoryview of a bytearray", lambda: net.load_model(memoryview(bytearray(16)), copy=False))
check("a Mat", lambda: net.load_model(ncnn_mp.Mat(16), copy=False))
check("a Mat over bytes", lambda: net.load_model(ncnn_mp.Mat(4, data=bytes(16)), copy=False))
check("unaligned", lambda: net.load_model(memoryview(bytes(16))[2:], copy=False))
check("a path", lambda: net.load_model("digits.bin", copy=False))
check("a DataReader", lambda: net.load_model(ncnn_mp.DataReader(from_memory=bytes(16)), copy=False))


class LendsItsBlob(ncnn_mp.Layer):
    """Tries to load a net in place from the blob ncnn lends it (a memoryview of it)."""

    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, blob, opt):
        check("a memoryview of a lent blob", lambda: net.load_model(memoryview(blob), copy=False))
        return blob.clone()


lender = ncnn_mp.Net()  # the digits model, its Python layer (blob 0 -> 1) replaced
lender.register_custom_layer(ncnn_mp.CUSTOM_BIT | 0, LendsItsBlob)
lender.load_param_bin(param)
lender.load_model(ncnn_mp.DataReader(zeros=True))
with lender.create_extractor() as ex:
    ex.input(DATA, ncnn_mp.Mat(8, 8, 1))
    ex.extract(1)
lender.close()
print("still", probs(net, 10) == reference[:10])

print("-- bounded: a truncated .bin raises in both modes, never reads past its end")
for cut in (0, 4, 516, len(weights) - 4):
    for copy in (True, False):
        check("%d bytes, copy=%s" % (cut, copy), lambda: net.load_model(memoryview(weights)[:cut], copy=copy))
check("extract after", lambda: net.create_extractor())
check("weights_info after", lambda: net.weights_info())
net.load_model(weights, copy=False)
print("loaded again", probs(net, 10) == reference[:10])
print("the weights are as they were after the extracts", hashlib.sha256(weights).digest() == digest)
net.clear()
check("weights_info after clear", lambda: net.weights_info())
net.close()
del net, copied
print("live custom layers", settle())

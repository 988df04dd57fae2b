# SPDX-License-Identifier: MIT
# Binary params (what an NCNN_STRING=OFF build reads): load_param_bin, the custom layer
# registered by type index, blobs fed and read by index. Same results on every build.
import ncnn_mp
from mptest import DIGITS, DIGITS_MODEL, Standardize, read

DATA, PROB = 0, 5  # blob numbers ncnn_mp_tools/param_to_bin.py printed for digits.param
images = read(DIGITS + "/digits_test.bin")
N = len(images) // 65  # 64 pixel bytes per image, then one label byte per image


def image(i):
    m = ncnn_mp.Mat(8, 8, 1)
    for j in range(64):
        m[j] = images[i * 64 + j]
    return m


net = ncnn_mp.Net()
net.register_custom_layer(ncnn_mp.CUSTOM_BIT | 0, Standardize)
net.load_param_bin(read(DIGITS + "/digits.param.bin"))
net.load_model(read(DIGITS_MODEL))
print("inputs", [net.get_input_index(i) for i in range(net.input_count)],
      "outputs", [net.get_output_index(i) for i in range(net.output_count)])

correct = 0
for i in range(N):
    with net.create_extractor() as ex:
        ex.input(DATA, image(i))
        prob = ex.extract(PROB)
    scores = list(memoryview(prob))
    correct += scores.index(max(scores)) == images[N * 64 + i]
print("images", N, "correct", correct)

if ncnn_mp.build_info()["NCNN_STRING"]:
    # The same model from text params gives the same probabilities.
    text = ncnn_mp.Net()
    text.register_custom_layer("Standardize", Standardize)
    text.load_param(ncnn_mp.DataReader(from_memory=read(DIGITS + "/digits.param")))
    text.load_model(read(DIGITS_MODEL))
    worst = 0.0
    for i in range(0, N, 15):
        with net.create_extractor() as a, text.create_extractor() as b:
            a.input(DATA, image(i))
            b.input("data", image(i))
            # Names on the Mats: a memoryview does not keep its Mat (and ncnn's data) alive.
            ma, mb = a.extract(PROB), b.extract("prob")
            pa, pb = memoryview(ma), memoryview(mb)
            worst = max([worst] + [abs(x - y) for x, y in zip(pa, pb)])
    same = worst < 1e-6
    text.clear()
else:
    same = True  # nothing to compare with: this ncnn cannot read text
print("same as text params", same)

net.clear()
print("live custom layers after clear", ncnn_mp.live_custom_layers())


import sys, time, ncnn
param, model, in_name, out_names, w, h, c, threads, runs = sys.argv[1:]
w, h, c, threads, runs = int(w), int(h), int(c), int(threads), int(runs)
if out_names[0] == "@":
    with open(out_names[1:]) as f:
        out_names = f.read()
outs = out_names.split(",")
net = ncnn.Net()
net.opt.num_threads = threads
made = []
if model.endswith("digits.bin"):
    from digits_layers import Standardize  # the script runs from examples/
    def create():
        layer = Standardize()
        made.append(layer)
        return layer
    net.register_custom_layer("Standardize", create, lambda layer: None)
net.load_param(param)
empty = ncnn.DataReaderFromEmpty()
net.load_model(empty if model == "-" else model)
x = ncnn.Mat(w, h, c)
x.fill(0.5)
times = []
for i in range(runs + 3):
    t0 = time.perf_counter()
    ex = net.create_extractor()
    ex.input(in_name, x)
    for name in outs:
        ex.extract(name)
    del ex
    if i >= 3:
        times.append((time.perf_counter() - t0) * 1000)
print(" ".join("%.4f" % t for t in times))

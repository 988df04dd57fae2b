# SPDX-License-Identifier: MIT
# DataReader subclasses written in Python (read(n)): params and weights streamed from a
# file, a BytesIO-like object or odd-sized chunks load the same net as a path or buffer does,
# byte for byte; every misbehaving reader fails its load with its own exception, and the
# Net, and the reader, load fine after.
import gc

import ncnn_mp
from mptest import DIGITS, DIGITS_MODEL, ON_MCU, Standardize, check, getenv, read

SHARED = getenv("NCNN_MP_SHARED_MODELS")
MNIST = (SHARED or "") + "/mnist"


def path_of(path):
    """Where open() finds a test file: on the board, in its ROMFS."""
    return "/rom/" + path.rsplit("/", 1)[-1] if ON_MCU else path


class Chunks(ncnn_mp.DataReader):
    """Serves a buffer `step` bytes at a time (fewer than asked for: ncnn_mp asks again)."""

    def __init__(self, data, step=7):
        super().__init__()
        self.data = memoryview(data)
        self.pos = 0
        self.step = step
        self.asked = 0  # the most read() was asked for at once

    def read(self, n):
        self.asked = max(self.asked, n)
        piece = self.data[self.pos:self.pos + min(n, self.step)]
        self.pos += len(piece)
        return piece


class Concat(Chunks):
    """Two buffers as one stream, nothing copied (the board's heap is small)."""

    def __init__(self, first, rest, step):
        super().__init__(first, step)
        self.rest = rest

    def read(self, n):
        piece = super().read(n)
        if not piece and self.rest is not None:
            self.data, self.pos, self.rest = memoryview(self.rest), 0, None
            piece = super().read(n)
        return piece


class Stream(ncnn_mp.DataReader):
    """What docs/usage.md shows: a file-like object's read(n)."""

    def __init__(self, f):
        super().__init__()
        self.f = f

    def read(self, n):
        return self.f.read(n)


class Memory:
    """A minimal BytesIO (the board's firmware may have none)."""

    def __init__(self, data):
        self.data, self.pos = bytes(data), 0

    def read(self, n):
        self.pos += n
        return self.data[self.pos - n:self.pos]


def output(net, blob, shape, fill):
    img = ncnn_mp.Mat(*shape)
    for i in range(len(img)):
        img[i] = fill(i)
    with net.create_extractor() as ex:
        ex.input(blob[0], img)
        return bytes(memoryview(ex.extract(blob[1])))


# --- The digits model (binary params, a Python layer inside the net): every build.
bin_param, weights = read(DIGITS + "/digits.param.bin"), read(DIGITS_MODEL)
DIGITS_IO, DIGITS_SHAPE = (0, 5), (8, 8, 1)


def digits(load_param, load_model):
    net = ncnn_mp.Net()
    net.register_custom_layer(ncnn_mp.CUSTOM_BIT | 0, Standardize)
    load_param(net)
    load_model(net)
    return output(net, DIGITS_IO, DIGITS_SHAPE, lambda i: (i * 7) % 17)


ref = digits(lambda n: n.load_param_bin(bin_param), lambda n: n.load_model(weights))
pr, wr = Chunks(bin_param), Chunks(weights, 13)
print("digits, 7 and 13-byte chunks:",
      digits(lambda n: n.load_param_bin(pr), lambda n: n.load_model(wr)) == ref, pr.pos == len(bin_param),
      wr.pos == len(weights))
print("digits, a file and a Memory:", digits(lambda n: n.load_param_bin(Stream(open(path_of(DIGITS + "/digits.param.bin"), "rb"))),
                                             lambda n: n.load_model(Stream(Memory(weights)))) == ref)
big = Chunks(weights, 1 << 30)
digits(lambda n: n.load_param_bin(bin_param), lambda n: n.load_model(big))
print("read(n) asked for at most", big.asked, "bytes at once")

# --- MNIST from text params (ncnn scans them through the look-ahead), where it is here.
if ncnn_mp.build_info()["NCNN_STRING"] and (ON_MCU or SHARED):
    mparam, mweights = read(MNIST + "/mnist.param"), read(MNIST + "/mnist.bin")
    MNIST_IO, MNIST_SHAPE = ("data", "fc"), (28, 28, 1)

    def mnist(load_param, load_model):
        net = ncnn_mp.Net()
        load_param(net)
        load_model(net)
        return output(net, MNIST_IO, MNIST_SHAPE, lambda i: (i % 29) / 29)

    mref = mnist(lambda n: n.load_param(mparam), lambda n: n.load_model(mweights))
    for step in (1, 7, 300):
        print("mnist, %d-byte chunks:" % step,
              mnist(lambda n: n.load_param(Chunks(mparam, step)), lambda n: n.load_model(Chunks(mweights, step))) == mref)
    print("mnist, files:", mnist(lambda n: n.load_param(Stream(open(path_of(MNIST + "/mnist.param"), "rb"))),
                                 lambda n: n.load_model(Stream(open(path_of(MNIST + "/mnist.bin"), "rb")))) == mref)
    # The scans read ahead (a 300-byte read() may end mid-token): a binary read after them
    # takes the look-ahead first. Here the param text ends in a newline ncnn does not scan,
    # so the weights after it come one byte late, and the load fails (as from a file).
    both = Concat(mparam, mweights, 300)
    same = mnist(lambda n: n.load_param(both), lambda n: n.load_model(both)) == mref
    print("mnist, params and weights in one stream, the same output:", same)
    print("  read ahead past the params:", both.rest is None)
    net = ncnn_mp.Net()
    net.load_param(Chunks(mparam))
    net.load_model(Chunks(mweights))
    info = net.weights_info()
    print("weights_info:", info["copied"] == len(mweights), info["in_place"], info["unused"])
else:
    for line in ("mnist, 1-byte chunks: True", "mnist, 7-byte chunks: True", "mnist, 300-byte chunks: True",
                 "mnist, files: True", "mnist, params and weights in one stream, the same output: False",
                 "  read ahead past the params: True", "weights_info: True 0 None"):
        print(line)  # (the same lines: one .exp for every build)

# --- Misuse: each load fails with its exception; the same Net then loads fine.


class TooMuch(ncnn_mp.DataReader):
    def read(self, n):
        return b"\0" * (n + 1)


class NotBytes(ncnn_mp.DataReader):
    def read(self, n):
        return n


class ReturnsNone(ncnn_mp.DataReader):
    def read(self, n):
        return None


class Raises(Chunks):
    """Serves `good` bytes of the data, then raises."""

    def __init__(self, data, good):
        super().__init__(data, 1000)
        self.good = good

    def read(self, n):
        if self.pos >= self.good:
            raise OSError("Raises.read: the connection dropped")  # (the user's own exception)
        return super().read(min(n, self.good - self.pos))


class Closes(ncnn_mp.DataReader):
    def read(self, n):
        self.close()


class Reenters(Chunks):
    """Its first read() loads another net through the same reader, which takes every byte."""

    def read(self, n):
        if self.pos == 0 and not self.asked:
            inner = ncnn_mp.Net()
            inner.register_custom_layer(ncnn_mp.CUSTOM_BIT | 0, Standardize)
            self.asked = n
            inner.load_param_bin(self)
            print("  inner load done")
        return super().read(n)


class NoRead(ncnn_mp.DataReader):
    pass


class Unbound(ncnn_mp.DataReader):
    def __init__(self):  # never calls super().__init__()
        pass


net = ncnn_mp.Net()
net.register_custom_layer(ncnn_mp.CUSTOM_BIT | 0, Standardize)


def good():
    net.load_param_bin(bin_param)
    net.load_model(weights)
    return output(net, DIGITS_IO, DIGITS_SHAPE, lambda i: (i * 7) % 17) == ref


good()
for name, load in (
        ("more than asked", lambda: net.load_model(TooMuch())),
        ("not bytes", lambda: net.load_model(NotBytes())),
        ("None", lambda: net.load_param_bin(ReturnsNone())),
        ("raises mid-weights", lambda: net.load_model(Raises(weights, len(weights) // 2))),
        ("raises in params", lambda: net.load_param_bin(Raises(bin_param, 40))),
        ("closes itself", lambda: net.load_model(Closes())),
        ("no read", lambda: net.load_model(NoRead())),
        ("base class", lambda: net.load_model(ncnn_mp.DataReader())),
        ("no super().__init__()", lambda: net.load_model(Unbound())),
        ("copy=False", lambda: net.load_model(Chunks(weights), copy=False)),
        ("runs out", lambda: net.load_model(Chunks(weights[:len(weights) - 10]))),
):
    check(name, load)
    print("  then loads:", good())
closed = Chunks(weights)
closed.close()
check("closed reader", lambda: net.load_model(closed))
check("reenters", lambda: net.load_param_bin(Reenters(bin_param)))
print("  then loads:", good())

# A reader reused: the second load goes on where the first stopped (at the end: nothing left).
again = Chunks(weights)
net.load_model(again)
check("reused at its end", lambda: net.load_model(again))
again.pos = 0
net.load_model(again)
print("reused after a rewind:", output(net, DIGITS_IO, DIGITS_SHAPE, lambda i: (i * 7) % 17) == ref)

# --- ModelBin over a Python reader: a layer's load() reads through read(n).
values = Memory(b"\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40")  # 1.0, 2.0, 3.0
mb = ncnn_mp.ModelBin(from_datareader=Stream(values))
print("ModelBin.load:", list(memoryview(mb.load(2, 1))), list(memoryview(mb.load(1, 1))))
check("ModelBin.load past the end", lambda: mb.load(1, 1))
mb2 = ncnn_mp.ModelBin(from_datareader=Raises(b"\0" * 64, 8))
print("ModelBin.load:", list(memoryview(mb2.load(2, 1))))
check("ModelBin.load raising", lambda: mb2.load(2, 1))

# A reader kept after its Net and ModelBin are gone, then used again.
keep = Chunks(bin_param)
n2 = ncnn_mp.Net()
n2.register_custom_layer(ncnn_mp.CUSTOM_BIT | 0, Standardize)
n2.load_param_bin(keep)
del n2, mb, mb2
gc.collect()
keep.pos = 0
net.load_param_bin(keep)
net.load_model(weights)
print("kept reader after its Net:", output(net, DIGITS_IO, DIGITS_SHAPE, lambda i: (i * 7) % 17) == ref)
r = Chunks(weights)
net.load_model(r)
r.close()
check("closed after its load", lambda: net.load_model(r))
print("  then loads:", good())

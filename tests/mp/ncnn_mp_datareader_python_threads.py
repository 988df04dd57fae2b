# SPDX-License-Identifier: MIT
# One Python DataReader read by loads in two threads at once, and a reader per thread:
# no crash; each thread's own reader loads the model right, the shared one whatever bytes
# its thread got (each fails or loads).
import ncnn_mp
from mptest import DIGITS, DIGITS_MODEL, Standardize, read

try:
    import _thread
    import time
except ImportError:
    print("SKIP: no threads")
    raise SystemExit
from gc_settled import setattr_settled, setitem_settled  # noqa: E402

bin_param, weights = read(DIGITS + "/digits.param.bin"), read(DIGITS_MODEL)


class Chunks(ncnn_mp.DataReader):
    def __init__(self, data, step):
        super().__init__()
        self.data, self.pos, self.step = memoryview(data), 0, step

    def read(self, n):
        piece = self.data[self.pos:self.pos + min(n, self.step)]
        self.pos += len(piece)
        return piece


class SettledStandardize(Standardize):
    """The digits model's layer with its attributes made in __init__ and its weights stored
    through gc_settled: the Unix port runs these threads without a GIL (docs/limits.md)."""

    def __init__(self):
        super().__init__()
        self.mean = self.scale = None

    def load_model(self, mb):
        setattr_settled(self, "mean", mb.load(self.count, 1).clone())
        setattr_settled(self, "scale", mb.load(self.count, 1).clone())
        return 0


def net():
    n = ncnn_mp.Net()
    n.register_custom_layer(ncnn_mp.CUSTOM_BIT | 0, SettledStandardize)
    n.load_param_bin(bin_param)
    return n


def out(n):
    img = ncnn_mp.Mat(8, 8, 1)
    img.fill(3.0)
    with n.create_extractor() as ex:
        ex.input(0, img)
        return bytes(memoryview(ex.extract(5)))


ref = net()
ref.load_model(weights)
ref = out(ref)
results = [None, None]  # each thread's rounds, stored when it is done


def worker(t, shared, rounds):
    mine = []
    for i in range(rounds):
        n = net()
        n.load_model(Chunks(weights, 5 + i))
        ok = out(n) == ref
        try:
            shared.pos = 0 if shared.pos >= len(weights) else shared.pos
            n.load_model(shared)
            shared_ok = "loaded"
        except (ValueError, RuntimeError):
            shared_ok = "failed"
        mine.append((ok, shared_ok in ("loaded", "failed")))
    setitem_settled(results, t, mine)


shared = Chunks(weights, 3)
for t in range(2):
    _thread.start_new_thread(worker, (t, shared, 10))
for _ in range(600):
    if None not in results:
        break
    time.sleep(0.05)
rounds = [r for mine in results if mine for r in mine]
print("rounds", len(rounds), "own readers right", all(a for a, _ in rounds), "shared ended", all(b for _, b in rounds))

# SPDX-License-Identifier: MIT
"""What Extractor.extract's hook costs on a QEMU board (-icount: emulated instructions): one
extract of a real model without a hook, with a hook that does nothing, and with one that counts
the layers and keeps the last name (a progress display's work); the difference over the calls
made is the cost of one call between two layers.

    make py SCRIPT=tests/bench/hook_cost.py ARGS="[qemu|qemu-m4f|rv32|xtensa|esp32core] [retinaface|nanodet]"
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from ci.firmware import build_firmware
from ci.qemu import run_script
from ncnn_mp_tools.romfs_pack import pack

SIDE = 96  # (the per-layer cost does not depend on the input's size; the extract's does)

BOARD_SCRIPT = """
import gc, ncnn_mp, qemu_board
net = ncnn_mp.Net()
net.load_param(ncnn_mp.DataReader(from_memory=memoryview(open("/rom/m.param", "rb"))))
net.load_model(memoryview(open("/rom/m.bin", "rb")), copy=False)
x = ncnn_mp.Mat(%d, %d, 3)
x.fill(0.5)
state = [0, None]
def nothing(index, name, type, count):
    pass
def progress(index, name, type, count):
    state[0] += 1
    state[1] = name
def run(hook):
    with net.create_extractor() as ex:
        ex.input(%r, x)
        gc.collect()
        t0 = qemu_board.time_ns()
        ex.extract(%r, hook=hook)
        return qemu_board.time_ns() - t0
for hook, label in ((None, "none"), (nothing, "nothing"), (progress, "progress")):
    run(hook)  # (the first extract sizes the allocator's pools)
    spent = min(run(hook) for _ in range(3))
    print(label, spent)
state[0] = 0
run(progress)
print("calls", state[0])
"""


def main(board: str = "qemu", which: str = "retinaface") -> int:
    from real_models import nanodet_model, retinaface_models

    with tempfile.TemporaryDirectory() as tmp:
        if which == "retinaface":
            (param, weights), size, blobs = retinaface_models(Path(tmp))["fp32"], (SIDE, SIDE), ("data", "face_rpn_cls_prob_reshape_stride8")
        else:
            (param, weights), size, blobs = nanodet_model(Path(tmp)), (SIDE, 64), ("input.1", "836")
        image = Path(tmp) / "romfs.img"
        image.write_bytes(pack({"m.param": param.read_bytes(), "m.bin": weights.read_bytes()}))
        source = (BOARD_SCRIPT % (*size, *blobs)).encode()
        r = run_script(board, build_firmware(board), source, timeout=1800, icount=True, romfs=image)
    if r.returncode != 0:
        print(r.output, file=sys.stderr)
        return 1
    got = dict(line.split() for line in r.output.splitlines() if line.split()[:1] in (["none"], ["nothing"], ["progress"], ["calls"]))
    none, nothing, progress, calls = (int(got[k]) for k in ("none", "nothing", "progress", "calls"))
    print(f"### Extractor.extract's hook on {board}, {which} fp32 {size[0]}x{size[1]} ({calls} calls an extract)\n")
    print("| hook | instructions an extract | more than none | a call |")
    print("|---|---:|---:|---:|")
    for label, spent in (("none", none), ("does nothing", nothing), ("counts, keeps the name", progress)):
        print(f"| {label} | {spent:,} | {100 * (spent - none) / none:.2f}% | {(spent - none) / calls:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

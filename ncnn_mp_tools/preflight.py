# SPDX-License-Identifier: MIT
"""`ncnn-mp preflight` (`make preflight`): will these models run on that firmware, and in how much memory?

    ncnn-mp preflight --dist DIST --board qemu model.param [model.bin] ... [data=160x160x3] [--frame rgb565]
        [--plans DIR]
    make preflight PROFILE=qemu MODELS="model.param [model.bin] ..." [SHAPES="data=160x160x3"] [SIZED=1] [FRAME=rgb565]

For each model (a .param, text or binary, with the .bin beside it or named after it):
1. the layers it uses, the layers ncnn runs besides (layers.py, from ncnn's source for
   the firmware's CPU family), and which of them the firmware leaves out;
2. measured by running it, weights in place (load_model(copy=False)): on the Unix firmware
   (with ncnn_mp's kernels, profile memcheck, for a model with int8 between layers),
   and on the profile's QEMU board (its files in the board's ROMFS): what the weights cost
   in RAM (in place, copied, converted), ncnn's blob and workspace peak for one extract of
   every output (a counting Allocator), ncnn's C heap, the Python heap, and on the board the
   instructions of the extract. In a checkout, a board whose profile lacks layers the models
   need is measured on the profile's firmware sized to the models (`make firmware MODELS=...`:
   the layers they need and no others), which SIZED=1 asks for in any case; outside one, a
   firmware that lacks layers is reported and not run.
Inputs are the model's Input layers' shapes (w, h, c params); SHAPES gives those a model
leaves open (RetinaFace's `data` takes any size), by blob name. FRAME (a pixel format: rgb565,
rgb565_be, yuyv, nv12, nv21, rgb, bgr, gray) feeds each input from a camera frame of its size,
as a board's program does: straight to int8 (Mat.from_pixels_int8) where the model's first
layers read int8. Then the extract is run again, on a fresh board, as a board runs it: in an
arena (Allocator(arena=...)) reserved before the load for the input, the blobs and the
workspace: first fit, which records the blocks' sizes and lifetimes and lays them out as a plan
(Allocator.plan(), written to --plans DIR/MODEL.plan: build/plans/PROFILE in a checkout), then, on a fresh board, in an
arena of that plan; it prints what the extract needs of each and the board's RAM budget (weights
copied, the arena, what ncnn took besides, MicroPython's heap).
"""

from __future__ import annotations

import ast
import struct
import sys
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from ncnn_mp_tools.device import PROBES, Targets, run_probe
from ncnn_mp_tools.device import main as device_main
from ncnn_mp_tools.errors import fail, say
from ncnn_mp_tools.layers import model_layers, required
from ncnn_mp_tools.target import Target

MAGIC = struct.pack("<i", 7767517)  # a binary param starts with it as an int32, a text one as digits


def split_args(argv: list[str]) -> tuple[list[Path], dict[str, tuple[int, int, int]]]:
    """MODELS and SHAPES as the Makefile passes them: paths, and NAME=WxHxC shapes by blob name."""
    shapes: dict[str, tuple[int, int, int]] = {}
    paths: list[Path] = []
    for arg in argv:
        if "=" in arg and "x" in arg.split("=", 1)[1]:
            name, dims = arg.split("=", 1)
            w, h, c = (int(v) for v in dims.split("x"))
            shapes[name] = (w, h, c)
        else:
            paths.append(Path(arg).resolve())
    return paths, shapes


def model_pairs(paths: list[Path]) -> list[tuple[Path, Path]]:
    """(.param, .bin) pairs: a .bin given after its .param, else the one named after it."""
    pairs: list[tuple[Path, Path]] = []
    for p in paths:
        if p.suffix == ".bin" and not p.name.endswith(".param.bin"):
            if not pairs or pairs[-1][1] != Path():
                fail(f"{p}: a .bin with no .param before it", "list each model's .param, then its .bin")
            pairs[-1] = (pairs[-1][0], p)
        else:
            pairs.append((p, Path()))
    out = []
    for param, weights in pairs:
        if weights == Path():
            stem = param.name.removesuffix(".bin").removesuffix(".param")
            weights = param.with_name(stem + ".bin")
        for f in (param, weights):
            if not f.exists():
                fail(f"{f} does not exist", "give the model's .param and .bin paths")
        out.append((param, weights))
    return out


def model_inputs(param: Path, shapes: dict[str, tuple[int, int, int]]) -> list[tuple[object, tuple[int, int, int]]]:
    """The model's Input blobs (names; numbers in a binary param) and the shapes to feed."""
    binary = param.read_bytes()[:4] == MAGIC
    lines = [] if binary else [line for line in param.read_text().split("\n")[2:] if line.strip()]
    inputs: list[tuple[object, tuple[int, int, int]]] = []
    for index, (layer, params) in enumerate(model_layers(param)):
        if layer != "Input":
            continue
        name: object = index if binary else lines[index].split()[4 + int(lines[index].split()[2])]  # its top blob
        w, h, c = (int(str(params.get(k, 0))) for k in (0, 1, 2))
        if w <= 0 and str(name) in shapes:  # (a shape the param fixes is the model's own)
            w, h, c = shapes[str(name)]
        if w <= 0:
            fail(f"{param}: input {name!r} has no fixed shape",
                 f'give it after the models: {name}=WxHxC (make preflight: SHAPES="{name}=WxHxC")')
        inputs.append((name, (w, max(h, 1), max(c, 1))))
    return inputs


def int8_between_layers(param: Path) -> bool:
    """The model keeps activations int8 between layers (quantize_int8 --chain: a convolution with
    an output scale, 8= 100 + n), which ncnn's own x86 layers cannot run: the Unix firmware
    refuses it, the one with ncnn_mp's kernels (profile memcheck) runs it as the boards do."""
    return any(t in ("Convolution", "ConvolutionDepthWise") and int(str(p.get(8, 0))) >= 100
               for t, p in model_layers(param))


def lacking(target: Target, params: Sequence[Path]) -> list[str]:
    """The ncnn layers these models need that the firmware leaves out (none for one that keeps
    every layer: the Unix ones)."""
    if target.layers is None:
        return []
    need = {t for p in params for t in required(model_layers(p), target.arch)}
    return sorted(need - target.layers)


def probe(target: Target, config: dict[str, Any], files: dict[str, bytes], timeout: float) -> list[dict[str, Any]]:
    """Runs probes/preflight_probe.py with `config` on the firmware (device.py: on a QEMU board
    with `files` as its ROMFS); one dict of measurements a model (or {"failed": output})."""
    output, ok = run_probe(target, PROBES / "preflight_probe.py", config, files, timeout,
                           icount=True)
    results = []
    for line in output.splitlines():
        if line.startswith("{") and "'model':" in line:
            results.append(ast.literal_eval(line))
    if not ok:
        results.append({"failed": output[-1500:]})
    return results


FRAMES = ("rgb565", "rgb565_be", "yuyv", "nv12", "nv21", "rgb", "bgr", "gray")
ARENA_TRIES = 3  # an arena too small for the measuring run is doubled, at most this often


def _kib(n: object) -> str:
    return "-" if n is None else f"{int(str(n)) / 1024:,.1f} KiB"


def _report(where: str, results: list[dict[str, Any]]) -> bool:
    """Prints the measurements; False when a run failed."""
    say(f"measured on {where}:")
    for r in results:
        if "failed" in r:
            print(f"  FAILED (not enough memory, or a layer the firmware lacks?):\n{r['failed']}")
            continue
        w = r["weights"]
        print(f"  {Path(r['model']).name}: weights in place {_kib(w['in_place'])}, copied {_kib(w['copied'])}, "
              f"converted to fp32 {_kib(w['converted'])}; RAM the load left in use {_kib(w['ram'])}")
        if r.get("input_int8_scales"):
            print("    inputs from a camera frame: " + ", ".join(
                f"{b} {'int8, scale %g (Mat.from_pixels_int8)' % s if s else 'float32 (from_pixels_resize)'}"
                for b, s in r["input_int8_scales"]))
        print(f"    one extract: ncnn blobs + workspace peak {_kib(r['blob_peak'])}"
              + (f", C heap in use after load {_kib(r['c_heap_load'])} / after extract {_kib(r['c_heap_extract'])}"
                 f", C heap high-water since boot {_kib(r['c_heap_high_water'])}" if r["c_heap_load"] is not None else "")
              + f"; Python heap {_kib(r['py_heap_load'])} after load, {_kib(r['py_heap_extract'])} after extract")
        if r["instructions"] is not None:
            print(f"    {r['instructions']:,} instructions for the extract"
                  + (f", {r['frame_instructions']:,} for the frame's conversion" if r.get("frame_instructions") else ""))
        print("    outputs: " + ", ".join(f"{b} {w}x{h}x{c}" for b, w, h, d, c in r["outputs"]))
    return bool(results) and not any("failed" in r for r in results)


def _report_arena(results: list[tuple[dict[str, Any], dict[str, Any]]], plans: Path | None) -> None:
    """The arena runs: what the extract needs of an arena as planned, and the board's RAM budget."""
    for first_fit, r in results:
        name = first_fit["name"]
        if first_fit["plan"] is None:
            print(f"  {name}: the extract took nothing of an arena (no outputs to extract?): nothing to plan")
            continue
        print(f"  {name}: the extract in an arena: {_kib(first_fit['blob_peak'])} first fit, {_kib(r['blob_peak'])} "
              f"as planned ({r['unplanned']} blocks off the plan)")
        if plans is not None:
            plans.mkdir(parents=True, exist_ok=True)
            out = plans / (Path(name).stem.removesuffix(".param") + ".plan")
            out.write_bytes(bytes.fromhex(first_fit["plan"]))
            print(f"    the plan: {out} ({out.stat().st_size:,} bytes; on the board: "
                  f"Allocator(arena=open('/rom/{out.name}', 'rb').read()) before the load)")
        if r["c_heap_high_water"] is None:
            continue
        ram, other, py = r["weights"]["ram"] or 0, r["c_heap_other"], r["py_heap_size"]
        print(f"    RAM budget: weights copied {_kib(ram)} + arena {_kib(r['arena'])} (its plan held beside it) + "
              f"ncnn's other allocations and fragmentation {_kib(other)} + MicroPython's heap {_kib(py)} = "
              f"{_kib(r['c_heap_high_water'] + py)} with the C heap's high-water since boot "
              f"({_kib(r['c_heap_high_water'])}; the C stack besides)")


def arena_runs(target: Target, config: dict[str, Any], files: dict[str, bytes], measured: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each model run again in an arena twice, a fresh process or boot each: first fit in one
    sized from the counting run's peak with room for the input and the headers (doubled while
    too small), which records its plan; then in an arena of that plan. (first fit, planned)."""
    out = []
    for model, first in zip(config["models"], measured):
        if "failed" in first:
            continue
        inputs = sum(w * h * c * 4 for _, (w, h, c) in model["inputs"])
        size = 2 * int(first["blob_peak"]) + inputs + 64 * 1024
        for _ in range(ARENA_TRIES):
            (fit,) = probe(target, dict(config, models=[model], arena=size), files, timeout=1800)[-1:]
            if "failed" not in fit or "MemoryError" not in fit["failed"]:
                break
            size *= 2
        fit["name"] = model.get("name", Path(model["param"]).name)
        if "failed" in fit or fit["plan"] is None:
            out.append((fit, fit))
            continue
        (planned,) = probe(target, dict(config, models=[model], arena=fit["plan"]), files, timeout=1800)[-1:]
        out.append((fit, planned))
    return out


def preflight(targets: Targets, argv: list[str]) -> int:
    """Exit status 0: every model measured everywhere; 1: a run failed."""
    target = targets.target
    plans = None
    if "--plans" in argv:
        at = argv.index("--plans")
        if at + 1 == len(argv):
            fail("--plans needs a folder", "give --plans DIR (where the arena plans are written)")
        plans = Path(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    frame = None
    if "--frame" in argv:
        at = argv.index("--frame")
        frame = argv[at + 1].lower() if at + 1 < len(argv) else ""
        if frame not in FRAMES:
            fail(f"FRAME={frame} is not a camera frame format", f"give one of: {', '.join(FRAMES)}")
        argv = argv[:at] + argv[at + 2:]
    paths, shapes = split_args(argv)
    if not paths:
        fail("preflight needs models", "ncnn-mp preflight --dist DIST --board qemu model.param model.bin")
    arch = target.arch
    own = targets.own or target  # (the firmware as its profile has it, when target is sized to the models)
    pairs = model_pairs(paths)
    models: list[dict[str, Any]] = []
    files: dict[str, bytes] = {}
    for n, (param, weights) in enumerate(pairs):
        layers = model_layers(param)
        uses = list(dict.fromkeys(t for t, _ in layers))
        need = required(layers, arch)
        besides = {k: v for k, v in need.items() if v != "the model"}
        say(f"{param.name} (weights {weights.name}, {weights.stat().st_size:,} bytes)")
        print(f"  layers it uses ({len(uses)}): {', '.join(uses)}")
        print(f"  layers ncnn runs besides on {arch} ({len(besides)}): "
              + ", ".join(f"{k} ({v})" for k, v in sorted(besides.items())))
        custom = [t for t in uses if t not in need]
        if custom:
            print(f"  custom layers (register_custom_layer before load_param): {', '.join(custom)}")
        missing = lacking(own, [param])
        if missing:
            print(f"  {own.label} LACKS: {', '.join(missing)} (it would refuse the model, or call through NULL): "
                  f"a board needs a firmware built with MODELS=\"{param}\""
                  + (" (measured below)" if own is not target else " (in a checkout: make firmware)"))
        else:
            print(f"  {own.label} keeps every layer it needs")
        binary = param.read_bytes()[:4] == MAGIC
        if not binary and not own.names:
            fail(f"{own.label} has ncnn without NCNN_STRING: it cannot read the text param {param}",
                 f"give its binary form: python3 -m ncnn_mp_tools.param_to_bin {param} {param}.bin")
        names = (f"m{n}.param", f"m{n}.bin")
        files[names[0]], files[names[1]] = param.read_bytes(), weights.read_bytes()
        models.append({"param": str(param), "bin": str(weights), "binary_param": binary, "name": param.name,
                       "inputs": model_inputs(param, shapes), "outputs": [], "rom": names})
    config = {"opt": {"num_threads": 1}, "copy": False, "models": models, "frame": frame and frame.upper()}
    if frame and any(c not in ((1,) if frame == "gray" else (3,)) for m in models for _, (_, _, c) in m["inputs"]):
        fail(f"a {frame} frame makes {'1 channel' if frame == 'gray' else '3 channels'}, and an input has another count",
             "give the inputs' shapes with that many channels (SHAPES), or another FRAME")
    chain = any(int8_between_layers(p) for p, _ in pairs)
    host = targets.host(chain)
    ok = True
    if host is None:
        print(f"  (no Unix firmware{' with ncnn_mp kernels (int8 between layers needs them)' if chain else ''} to "
              "measure on the desktop: the board's figures only)")
    else:
        what = ("the Unix firmware with ncnn_mp's kernels (int8 between layers needs them)" if chain else
                "the Unix firmware (x86: ncnn repacks some weights there that a generic build keeps in place)")
        measured = probe(host, config, {}, timeout=600)
        ok = _report(what, measured)
    if target.board is None:
        if host is not None:
            _report_arena(arena_runs(host, config, {}, measured), None)
        return 0 if ok else 1
    missing = lacking(target, [param for param, _ in pairs])
    if missing:
        fail(f"{target.label} lacks layers the models need: {', '.join(missing)}",
             'build one sized to them in a checkout: make firmware PROFILE=... MODELS="..."')
    what = target.label
    board = dict(config, models=[dict(m, param="/rom/" + m["rom"][0], bin="/rom/" + m["rom"][1]) for m in models])
    measured = probe(target, board, files, timeout=1800)
    ok = _report(f"{what} under QEMU (weights in its ROMFS, in place)", measured) and ok
    say(f"in an arena on {what}, a fresh boot each:")
    arena = arena_runs(target, board, files, measured)
    failed = [r["failed"] for pair in arena for r in pair if "failed" in r]
    for f in failed:
        print(f"  FAILED in an arena:\n{f}")
    _report_arena([pair for pair in arena if not any("failed" in r for r in pair)], plans)
    return 0 if ok and len(arena) == len(measured) and not failed else 1

if __name__ == "__main__":
    sys.exit(device_main("preflight", preflight, sys.argv[1:]))

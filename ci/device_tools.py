# SPDX-License-Identifier: MIT
"""The device tools (ncnn_mp_tools: preflight, compare, model) on this checkout's firmwares.

The profile's firmware, built; sized to the models (make firmware MODELS=...) when the profile
lacks a layer they need or when asked (SIZED=1); the Unix firmware beside it (memcheck, with
ncnn_mp's kernels, for int8 between layers).

    python3 -m ci.device_tools preflight|compare|model --profile NAME [--sized] ARGS...

(compare and model run under the test venv's python: the wheel, onnx and pnnx are there.)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ci.common import BUILD, SetupError
from ci.firmware import target
from ncnn_mp_tools.device import Targets
from ncnn_mp_tools.target import Target


def host(kernels: bool) -> Target:
    return target("memcheck" if kernels else "unix")


def targets(profile_name: str, params: Sequence[Path] = (), sized: bool = False) -> Targets:
    """The profile's firmware for models `params` (.param files): its own, or sized to them when it
    lacks a layer they need, or when `sized` (and it keeps only some layers)."""
    from ncnn_mp_tools.preflight import lacking

    own = target(profile_name, build=False)
    if params and own.layers is not None and (sized or lacking(own, params)):
        return Targets(target(profile_name, params), host, own)
    return Targets(target(profile_name), host)


def params_of(argv: list[str]) -> list[Path]:
    """The .param files among a tool's arguments (the models' files: .param, .param.bin, .bin)."""
    from ncnn_mp_tools.preflight import model_pairs

    paths = [Path(a).resolve() for a in argv if not a.startswith("-") and a.endswith((".param", ".bin"))]
    return [p for p, _ in model_pairs(paths)] if paths else []


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m ci.device_tools")
    ap.add_argument("tool", choices=("preflight", "compare", "model"))
    ap.add_argument("--profile", default="unix")
    ap.add_argument("--sized", action="store_true")
    ap.add_argument("--device-model", nargs="+", default=[])
    ap.add_argument("--firmware", type=Path, help="this firmware (built already) rather than the profile's")
    args, rest = ap.parse_known_args(argv)
    try:
        if args.tool == "preflight":
            from ncnn_mp_tools.preflight import preflight

            return preflight(targets(args.profile, params_of(rest), args.sized),
                             [*rest, "--plans", str(BUILD / "plans" / args.profile)])
        if args.tool == "compare":
            from ncnn_mp_tools.compare import compare

            device = [Path(p).resolve() for p in args.device_model]
            sized = params_of([str(p) for p in device]) if device else params_of(rest)
            extra = ["--device-model", *map(str, device)] if device else []
            chosen = targets(args.profile, sized, args.sized) if args.firmware is None else \
                Targets(replace(target(args.profile, build=False), firmware=args.firmware.resolve(),
                                what=str(args.firmware)), host)
            return compare(chosen, [*rest, *extra])
        from ncnn_mp_tools.convert import convert

        return convert(Targets(target(args.profile, build=False), host), rest,
                       sized=lambda params: targets(args.profile, params, sized=True),
                       default_out=BUILD / "model")
    except SetupError as e:
        print(f"ncnn_mp {args.tool}: {e.what}: {e.todo}", file=sys.stderr)
        return 2  # (as the tools' own command lines: device.py)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

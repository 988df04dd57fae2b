# SPDX-License-Identifier: MIT
"""`ncnn-mp`: ncnn_mp's desktop tools, one command (installed with the ncnn_mp_tools package).

    ncnn-mp model      an ONNX (or ncnn) model to a board: fp32 and int8 files, checked, preflight, ROMFS
    ncnn-mp preflight  will models run on a firmware, in how much memory (measured on it)
    ncnn-mp compare    a model on a firmware against the CPython ncnn wheel, every blob
    ncnn-mp run        a MicroPython script on a firmware (a board's under QEMU, with a ROMFS)
    ncnn-mp quantize   an fp32 ncnn model to int8 (or its weights to fp16 / fp32)
    ncnn-mp romfs      files into a ROMFS image, data aligned (weights used in place)
    ncnn-mp param-to-bin   a text .param to the binary form (ncnn without NCNN_STRING)
    ncnn-mp models     the published models the examples use: fetch by name, list, path

model, preflight, compare and run take the firmware as `--dist FOLDER --board NAME` (the folder
`make dist` wrote: its manifest says what each firmware is) or `--firmware PATH`. `ncnn-mp COMMAND
--help` shows a command's own arguments.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from ncnn_mp_tools import __version__


def _device(tool: str, name: str) -> Callable[[list[str]], int]:
    def run(argv: list[str]) -> int:
        import importlib

        from ncnn_mp_tools.device import main

        module = importlib.import_module(f"ncnn_mp_tools.{name}")
        return main(tool, getattr(module, {"convert": "convert", "run": "main"}.get(name, name)), argv)
    return run


def _quantize(argv: list[str]) -> int:
    from ncnn_mp_tools.quantize_int8 import main

    return main(argv)


def _romfs(argv: list[str]) -> int:
    from ncnn_mp_tools.romfs_pack import main

    return main(argv)


def _param_to_bin(argv: list[str]) -> int:
    from ncnn_mp_tools.param_to_bin import main

    return main(["ncnn-mp param-to-bin", *argv])


def _models(argv: list[str]) -> int:
    from ncnn_mp_tools.models import main

    return main(argv)


COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "model": _device("model", "convert"),
    "preflight": _device("preflight", "preflight"),
    "compare": _device("compare", "compare"),
    "run": _device("run", "run"),
    "quantize": _quantize,
    "romfs": _romfs,
    "param-to-bin": _param_to_bin,
    "models": _models,
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    if args[0] == "--version":
        print(f"ncnn-mp {__version__}")
        return 0
    command = COMMANDS.get(args[0])
    if command is None:
        print(f"ncnn-mp: no command {args[0]!r}; the commands: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    return command(args[1:])


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: MIT
"""How the tools fail and report: one line naming what failed and what to do, and progress lines.

The build harness (ci/) uses the same (SetupError, fail, say)."""

from __future__ import annotations

from typing import NoReturn


class SetupError(Exception):
    """A step failed: `what` failed, `todo` says what the user can do about it."""

    def __init__(self, what: str, todo: str) -> None:
        super().__init__(f"{what}: {todo}")
        self.what = what
        self.todo = todo


def fail(what: str, todo: str) -> NoReturn:
    raise SetupError(what, todo)


def say(msg: str) -> None:
    print(f"[ncnn_mp] {msg}", flush=True)

# SPDX-License-Identifier: MIT
"""One rule for errors (issue 11): every message ncnn_mp raises starts with the call it came
from, "Class.method: ", "Class(): ", "Class.attr: " or "ncnn_mp.function: "."""

from __future__ import annotations

import re

from conftest import MP_TESTS, MicroPython

PREFIX = re.compile(r"^(\w+)(\.\w+|\(\)): ")
# A check() line of the test scripts: "label -> ExceptionType: message".
RAISED = re.compile(r"^(.*?) -> (\w+): (.*)$")

# Messages in the expected outputs that ncnn_mp does not raise: the scripts' own custom
# layers raise these, and MicroPython itself says an attribute does not exist.
NOT_OURS = {"boom", "cannot release"}
MICROPYTHON_OWN = re.compile(r"^'\w+' object has no attribute '\w+'$")


def unprefixed(lines: list[str]) -> list[str]:
    bad = []
    for line in lines:
        m = RAISED.match(line)
        if m is None:
            continue
        message = m.group(3)
        if message in NOT_OURS or MICROPYTHON_OWN.match(message):
            continue
        if not PREFIX.match(message):
            bad.append(line)
    return bad


def test_argument_errors_name_the_call(micropython: MicroPython) -> None:
    """Every method, function and constructor called wrongly (ncnn_mp_arg_errors.py, which
    finds them with dir()) raises a message that names it."""
    r = micropython.run(MP_TESTS / "ncnn_mp_arg_errors.py")
    assert r.returncode == 0, r.explain()
    lines = r.stdout.splitlines()
    raised = [line for line in lines if RAISED.match(line)]
    assert len(raised) > 300, r.stdout  # every class's every method, three ways at least
    assert "without a sample []" in lines[0], lines[0]
    assert not unprefixed(raised), "\n".join(unprefixed(raised))
    # The argument checks themselves are TypeErrors, whichever the method.
    for line in raised:
        label, kind, message = RAISED.match(line).groups()
        if label.endswith((" too many", " unknown keyword")):
            assert kind == "TypeError", line


def test_every_expected_message_names_the_call() -> None:
    """The same rule over every script's expected output (the MCU ones too)."""
    bad = []
    for exp in sorted(MP_TESTS.glob("*.exp")):
        bad += [f"{exp.name}: {line}" for line in unprefixed(exp.read_text().splitlines())]
    assert not bad, "\n".join(bad)


# A message text in ncnn_mp's C sources: MicroPython's collector of texts to compress
# (py/makeqstrdefs.py) takes exactly one string literal between the parentheses.
TEXT = re.compile(r'\b(NCNN_MP_TEXT|NCNN_MP_FORMAT|MP_ERROR_TEXT)\(')
LITERAL = re.compile(r'\("((?:[^"\\]|\\.)*)"\)')


def message_texts() -> list[tuple[str, str, str | None]]:
    """(file:line, macro, text) of every message macro in ncnn_mp/binding/*.c; text None where the
    argument is not one string literal."""
    from conftest import REPO

    found = []
    for path in sorted((REPO / "ncnn_mp" / "binding").glob("*.c")):
        source = path.read_text()
        for m in TEXT.finditer(source):
            if source[:m.start()].rstrip().endswith("#define"):
                continue
            lit = LITERAL.match(source, m.end() - 1)
            line = source.count("\n", 0, m.start()) + 1
            found.append((f"{path.name}:{line}", m.group(1), lit.group(1) if lit else None))
    return found


def test_every_message_is_one_compressible_literal() -> None:
    """Every message is NCNN_MP_TEXT / NCNN_MP_FORMAT (or MP_ERROR_TEXT) of one literal: a board
    that compresses its messages compresses ncnn_mp's, and one that reports errors tersely
    drops them (ncnn_mp/binding/ncnn_mp.h). Adjacent literals would be left out of compression."""
    texts = message_texts()
    assert len(texts) > 150, texts  # (the scan finds them)
    bad = [where for where, _, text in texts if text is None]
    assert not bad, bad


# The longest message text a firmware may hold: with the heap locked, MicroPython decompresses
# a message into the emergency exception buffer only if the longest one fits there (152 bytes
# of MicroPython's tests' 256 on a 64-bit port, with its NUL), else every message comes out
# empty (ncnn_mp_longest_message, checks.c).
LONGEST = 150


def test_the_longest_message_guard_is_longest() -> None:
    """checks.c's never-raised message must be longer than any real one: MicroPython 1.25
    writes a NUL one byte past a buffer sized for the longest (ncnn_mp_longest_message); and
    no longer than LONGEST."""
    texts = [(where, text) for where, _, text in message_texts() if text is not None]
    guard = [t for where, t in texts if t.startswith("ncnn_mp: never raised")]
    assert len(guard) == 1, guard
    longest = max((len(t), where) for where, t in texts if not t.startswith("ncnn_mp: never raised"))
    assert len(guard[0]) > longest[0], longest
    assert len(guard[0]) <= LONGEST, len(guard[0])


def test_every_format_starts_with_where() -> None:
    """Every NCNN_MP_FORMAT starts "%s" with the call as its first argument: a board that
    reports errors tersely keeps that much of each message (ncnn_mp/binding/ncnn_mp.h)."""
    bad = [f"{where}: {text[:60]}" for where, macro, text in message_texts()
           if macro == "NCNN_MP_FORMAT" and text is not None and not text.startswith("%s")]
    assert not bad, "\n".join(bad)

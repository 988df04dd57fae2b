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

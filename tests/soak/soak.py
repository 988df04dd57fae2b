# SPDX-License-Identifier: MIT
"""Soak (make soak SECONDS=1800): the mixed workload of soak_workload.py in one
MicroPython process for a given time, printing the process's RSS and the MicroPython heap
(after a full collection) at every interval, then whether they stayed flat.

Flat: after the first fifth of the run (warm-up: ncnn's pools, the GC heap reaching its
working size), the highest RSS of the last half may exceed that of the first half by at
most RSS_SLACK_KIB (not judged under valgrind or the sanitizers, where RSS is the tool's),
and likewise the heap by HEAP_SLACK; at the end ncnn holds no Python layer but the few
stale stack words may keep (mptest.STALE_NETS). Exit status 1 when not flat, or when the
workload failed.

    python tests/soak/soak.py FIRMWARE SECONDS [INTERVAL]
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RSS_SLACK_KIB = 512
HEAP_SLACK = 8192  # the conservative GC's settled figure wanders by a few KiB with no trend


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def main(argv: list[str]) -> int:
    firmware, seconds = argv[0], int(argv[1])
    interval = int(argv[2]) if len(argv) > 2 else max(1, seconds // 60)
    env = dict(os.environ)
    env.setdefault("NCNN_MP_DIGITS", str(HERE.parents[1] / "build" / "models" / "digits"))
    proc = subprocess.Popen([firmware, "soak_workload.py", str(seconds), str(interval)], cwd=HERE, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    rows: list[tuple[int, int, int, int, int]] = []  # seconds, rounds, heap, live layers, RSS KiB
    lines: list[str] = []
    print("| seconds | rounds | RSS KiB | Python heap bytes | live Python layers |")
    print("|---:|---:|---:|---:|---:|", flush=True)
    for line in proc.stdout:
        lines.append(line)
        m = re.match(r"t=(\d+) rounds=(\d+) heap=(\d+) live_layers=(\d+)", line)
        rss = rss_kib(proc.pid) if m and proc.poll() is None else 0
        if m and rss:  # (0: the process is already exiting)
            row = (*(int(g) for g in m.groups()), rss)
            rows.append(row)  # type: ignore[arg-type]
            print(f"| {row[0]} | {row[1]} | {row[4]} | {row[2]} | {row[3]} |", flush=True)
    rc = proc.wait()
    if rc != 0 or not lines or not lines[-1].startswith("done"):
        print(f"the workload failed (exit status {rc}):\n" + "".join(lines[-20:]))
        return 1
    body = rows[len(rows) // 5:]
    if len(body) < 4:
        print("too short a run to judge (give more seconds or a shorter interval)")
        return 1
    first, last = body[:len(body) // 2], body[len(body) // 2:]
    done = dict(kv.split("=") for kv in lines[-1].split()[1:])
    rss_growth = max(r[4] for r in last) - max(r[4] for r in first)
    rss_slack = RSS_SLACK_KIB if done["rss_is_tools"] == "0" else None  # None: not judged
    heap_growth = max(r[2] for r in last) - max(r[2] for r in first)
    live_end, stale = rows[-1][3], int(done["stale_nets_allowed"])
    flat = (rss_slack is None or rss_growth <= rss_slack) and heap_growth <= HEAP_SLACK and live_end <= stale
    rss_allowed = f"{rss_slack}" if rss_slack is not None else "any: it is the tool's own"
    print(f"\n{lines[-1].strip()} in {seconds} s; after warm-up, RSS grew {rss_growth} KiB "
          f"(allowed {rss_allowed}), the heap {heap_growth} "
          f"bytes (allowed {HEAP_SLACK}); live Python layers at the end: {live_end} (allowed {stale}, "
          f"stale stack words): {'flat' if flat else 'NOT FLAT'}")
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

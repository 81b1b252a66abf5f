"""Hostile mails: the CPU the worker spends on one mail of each shape of
tests/test_hostile_cost.py (each close to 1 MB), against a typical move mail.

    .venv/bin/python bench/run.py hostile            # every shape, 1 MB
    .venv/bin/python bench/run.py --quick hostile    # every shape, 100 kB

Baseline: the CPU of one Super-Wari move mail (a fresh board each time, its first move
by the Subject), the median of several measured in the same run, through the same
worker on the same SQLite file. `value` is ms of CPU per mail, so the ratio reads "this
mail costs N move mails". Goal (issue 16): under 2 s of CPU per mail, whatever the
size of the baseline; the memory growth is in the note (tests/test_hostile_cost.py
checks both, in a process of its own).
"""

from __future__ import annotations

import email.utils
import statistics
import tempfile
from pathlib import Path

import common  # noqa: F401 - puts tests/ on sys.path
from common import Result

import test_hostile_cost as shapes
from test_hostile_cost import CPU_LIMIT, make_server, process_one

BASELINE_MAILS = 15


def move_mail(server, board: int) -> bytes:
    """A typical move mail: alice's first move on `board`."""
    date = email.utils.format_datetime(server.clock)
    return (f"From: Alice <alice@example.org>\r\nTo: pbmserv@localhost\r\nDate: {date}\r\n"
            f"Message-ID: <move{board}@example.org>\r\nSubject: superwari move {board} alice alice-pw c\r\n"
            "\r\nGood luck!\r\n").encode()


def run(quick: bool) -> list[Result]:
    shapes.SIZE = 100_000 if quick else 1_000_000
    mails = {name: make() for name, make in shapes.SHAPES.items()}
    with tempfile.TemporaryDirectory() as directory:
        server = make_server(Path(directory))
        server.signup("bob")
        samples = []
        for number in range(BASELINE_MAILS):
            server.send("alice@example.org", "superwari challenge alice alice-pw bob")
            samples.append(process_one(server, move_mail(server, 101 + number))["cpu"])
        baseline = statistics.median(samples) * 1000
        results = []
        for name, raw in mails.items():
            outcome = process_one(server, raw)
            results.append(Result(f"hostile {name} ({len(raw) // 1000} kB)", outcome["cpu"] * 1000, baseline,
                                  "ms CPU", goal=f"< {CPU_LIMIT:g} s", met=outcome["cpu"] < CPU_LIMIT,
                                  note=f"{outcome['status']}, {outcome['replies']} replies, "
                                       f"+{outcome['memory_kib'] // 1024} MB peak"))
    return results

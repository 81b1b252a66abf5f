"""What every benchmark shares: a result measured beside its baseline in the same run,
printed as a ratio (absolute times on a shared 2-core machine are noise)."""

from __future__ import annotations

import atexit
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "tests"):  # the package, and the mail generator of the tests
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


def scratch(prefix: str) -> Path:
    """A new temporary directory on the disk, removed when the benchmarks end rather
    than when one is done with it. On an ext4 without a journal (this machine's) a
    new file's inode skips every inode of its group freed in the last one to six
    minutes (`recently_deleted` in the kernel's ialloc.c): after the replay benchmark
    had removed its 20,000 replies, the next benchmark's every file took 0.5 to 1 ms
    of the kernel's time where it takes 30 us, and serve's sender spent more CPU
    creating its files than doing its work (2026-12-04)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def with_children(pid: int) -> list[int]:
    """`pid` and its live descendants (`serve` runs its worker in a child process);
    what /proc cannot tell is left out."""
    try:
        children = [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
                    for child in (task / "children").read_text().split()]
    except OSError:
        children = []
    return [pid] + [descendant for child in children for descendant in with_children(child)]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds so far of a process and its live descendants; 0 for
    what cannot be read (gone, or not on this machine)."""
    return sum(user + system for user, system in cpu_by_process(pid).values())


def cpu_by_process(pid: int, name_of_pid: str | None = None) -> dict[str, tuple[float, float]]:
    """The same, by process name (`serve` names its worker's and sender's processes:
    `pbmserv worker`, `pbmserv sender`; `pid` itself is `name_of_pid` if given), as
    (user, system) seconds; processes of one name are summed."""
    seconds: dict[str, tuple[float, float]] = {}
    for each in with_children(pid):
        try:
            name, _, rest = Path(f"/proc/{each}/stat").read_text().partition(" (")[2].rpartition(")")
        except OSError:
            continue
        name = name_of_pid if each == pid and name_of_pid else name
        fields = rest.split()
        user, system = seconds.get(name, (0.0, 0.0))
        # utime, stime: fields 14 and 15
        seconds[name] = (user + int(fields[11]) / TICK, system + int(fields[12]) / TICK)
    return seconds


@dataclass
class Result:
    """One measurement: `value` against `baseline`, both in `unit`; `goal` says which
    ratio we aim for, `met` whether this run reached it (None: no goal)."""

    name: str
    value: float
    baseline: float
    unit: str
    goal: str = ""
    met: bool | None = None
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.value / self.baseline if self.baseline else float("inf")


def median_seconds(fn, repeat: int) -> float:
    """Median seconds of `fn()` over `repeat` runs."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def report(results: list[Result], out=sys.stdout) -> None:
    """One line per result: value, baseline, ratio, and the goal with whether it was met."""
    for r in results:
        goal = f"  goal {r.goal}: {'met' if r.met else 'NOT met'}" if r.goal else ""
        note = f"  ({r.note})" if r.note else ""
        print(f"{r.name:<52} {r.value:>11.3f} {r.unit:<8} baseline {r.baseline:>11.3f}  "
              f"ratio {r.ratio:>7.2f}{goal}{note}", file=out)


def seeded_game(game, count: int, seed: int) -> list[tuple[int, str]]:
    """(seat, move) of the first `count` random legal moves of a two-player game of
    `game` from its start: the first game, from `seed`, `seed + 1`, ..., to last that
    long."""
    while True:
        rng, state, moves = random.Random(seed), game.setup(2, {p.name: p.default for p in game.params}, None), []
        while game.result(state) is None and len(moves) < count:
            seat = min(game.to_act(state))
            moves.append((seat, rng.choice(game.legal_moves(state, seat))))
            game.apply(state, seat, moves[-1][1], None)
        if len(moves) == count:
            return moves
        seed += 1

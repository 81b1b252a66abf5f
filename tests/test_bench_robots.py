"""Smoke run of the robot benchmark (bench/bench_robots.py) on two games with a few
games a match: every match and level is reported and well-formed. No strength or time
is asserted here: docs/robots.md has the full figures."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import bench_robots  # noqa: E402


def test_robots_quick_run_reports_every_match_and_level():
    results = bench_robots.run(quick=True, names=["wari", "survive"], count=4)
    names = [r.name for r in results]
    for game in ("wari", "survive"):
        assert [n for n in names if n.startswith(f"{game}: level") and " vs " in n] == [
            f"{game}: level 1 vs random", f"{game}: level 2 vs random", f"{game}: level 3 vs random",
            f"{game}: level 2 vs level 1", f"{game}: level 3 vs level 2"]
        assert [n for n in names if n.startswith(f"{game}:") and "CPU" in n] == [
            f"{game}: level {level} CPU per move (median)" for level in (1, 2, 3)]
    for result in results:
        assert result.value >= 0 and result.baseline >= 0, result  # a few games: a share may be 0
        assert (result.met is None) == (not result.goal), result

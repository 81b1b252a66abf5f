"""Smoke runs of the engines and scale benchmarks (bench/) at their quick sizes: they run
to the end and their results are well-formed. No timing is asserted: times on a shared
machine are noise, and the benchmarks report them as ratios for people to read."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import bench_engines  # noqa: E402
import bench_scale  # noqa: E402
from common import Result  # noqa: E402

from pbmserv.games import games  # noqa: E402


def assert_well_formed(result: Result) -> None:
    assert isinstance(result, Result)
    assert result.name and result.unit
    assert math.isfinite(result.value) and result.value > 0, result
    assert math.isfinite(result.baseline) and result.baseline > 0, result
    assert math.isfinite(result.ratio) and result.ratio > 0
    if result.goal:
        assert isinstance(result.met, bool), result
    else:
        assert result.met is None, result


def test_engines_quick_run_reports_every_game_and_serpent():
    results = bench_engines.run(quick=True)
    for result in results:
        assert_well_formed(result)
    names = [r.name for r in results]
    for name, game in games().items():
        if game.min_players == game.max_players:
            assert f"{name}: random full game" in names
        else:
            for players in (game.min_players, game.max_players):
                assert f"{name} {players}p: random full game" in names
    for result in results:
        if "random full game" in result.name:
            assert result.unit == "ms" and result.goal == "" and "games/s" in result.note
    check, listing = results[-2:]
    assert check.name == "serpent: check one move (mid-game)"
    assert check.goal == "< 5 ms" and check.unit == "ms"
    assert check.met == (check.value < 5)
    assert listing.name == "serpent: list all legal actions (mid-game)" and listing.goal == ""
    assert len(names) == len(set(names))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmRSS from /proc")
def test_scale_quick_run_reports_latency_ratios_and_serve_memory():
    results = bench_scale.run(quick=True)
    assert [r.name for r in results] == [
        "scale: show latency, 2,000 vs 100 games",
        "scale: move latency, 2,000 vs 100 games",
        "scale: move latency, a board of 1,000 logged actions vs a new one",
        "scale: serve RSS on 2,000 games",
    ]
    for result in results:
        assert_well_formed(result)
    show, move, history, memory = results
    for latency in (show, move, history):
        assert latency.unit == "ms" and latency.goal == "<= 2x"
        assert latency.met == (latency.value <= 2 * latency.baseline)
        assert "password_cost fast" in latency.note
    assert memory.unit == "MB" and memory.goal == "< 150 MB"
    assert memory.met == (memory.value < 150)
    assert memory.value > memory.baseline  # a serving server holds more than a bare import

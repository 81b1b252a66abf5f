"""Smoke runs of the replay and SMTP benchmarks (bench/bench_replay.py, bench/bench_smtp.py)
at their quick sizes: the results are well-formed. No timing is asserted."""

from __future__ import annotations

import email
import email.policy
import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import bench_replay  # noqa: E402
import bench_smtp  # noqa: E402
from common import Result  # noqa: E402


def well_formed(result: Result) -> None:
    assert isinstance(result, Result)
    assert result.name and result.unit and result.note
    assert result.value > 0 and result.baseline > 0 and math.isfinite(result.ratio)
    if result.goal:
        assert isinstance(result.met, bool)
    else:
        assert result.met is None


def test_replay_quick_run_is_well_formed():
    results = bench_replay.run(quick=True)
    assert [r.name for r in results] == ["replay: pbmserv replay vs email.message_from_bytes",
                                         "replay: writing the replies' words (part of replay) vs parsing"]
    for result in results:
        well_formed(result)
    replay, writing = results
    assert replay.unit == "s" and replay.goal == "ratio <= 5"
    assert " 0 errors" in replay.note and "mails/s" in replay.note
    # a part of the same run, against the same parsing
    assert writing.baseline == replay.baseline and 0 < writing.value < replay.value
    assert writing.goal == "" and "% of it" in writing.note


def test_timing_writers_times_every_holder_and_restores_them():
    import pbmserv.commands.boards as boards
    import pbmserv.play as play
    originals = (play.board_mails, boards.board_mails)
    spent = [0.0]
    with bench_replay.timing_writers(spent):
        assert play.board_mails is boards.board_mails and play.board_mails is not originals[0]
        with pytest.raises(AttributeError):  # a failing call is timed too
            boards.board_mails(None, None, None, [], None)
    assert (play.board_mails, boards.board_mails) == originals and spent[0] > 0


def test_replay_mbox_covers_every_game_with_right_board_numbers():
    raws, boards = bench_replay.generate(300)
    mails = [email.message_from_bytes(raw, policy=email.policy.default) for raw in raws]
    subjects = [str(m["Subject"]) for m in mails]
    for game in ("superwari", "wari", "survival", "serpent", "survive"):
        assert any(s.startswith(f"{game} challenge") for s in subjects), game
    assert any(s.startswith("serpent move 102 ") for s in subjects)  # size 4 is 101, size 5 is 102
    dates = [m["Date"].datetime for m in mails]
    assert dates == sorted(dates) and boards >= len(bench_replay.KINDS)


def test_smtp_quick_run_is_well_formed():
    results = bench_smtp.run(quick=True)
    assert [r.name for r in results] == [
        "smtp: end to end, 1 connection, vs Sink", "smtp: acceptance (last 250), 1 connection, vs Sink",
        "smtp: end to end, 8 connections, vs Sink", "smtp: acceptance (last 250), 8 connections, vs Sink",
        "smtp: serve CPU a move, 1 connection, vs Sink a mail",
        "smtp: one move at a time, its board mails vs the Sink's 250",
        "smtp: serve CPU a move, one at a time, vs Sink a mail"]
    for result in results:
        well_formed(result)
    for result in results[:4]:
        assert result.unit == "moves/s" and "password_cost=fast" in result.note
    assert [r.goal for r in results] == ["ratio >= 0.3", "ratio >= 0.6", "ratio >= 0.5", "ratio >= 0.6",
                                         "serve <= 2 ms", "", ""]
    assert results[4].unit == "ms" and "/proc" in results[4].note
    assert results[5].unit == "moves/s" and results[5].value < results[5].baseline  # the Sink only answers 250
    assert results[6].unit == "ms" and results[6].value > 0
    # a move is done only after it is accepted
    assert results[0].value <= results[1].value and results[2].value <= results[3].value

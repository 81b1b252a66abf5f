"""Robot against robot through whole games of every game, by mail through `replay`
(`GAME match`): every move is legal, every game finishes, and a second run writes the
same replies byte for byte."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from sqlalchemy import select

from conftest import maildir_messages
from mailgen import mail as dated_mail, write_mbox
from pbmserv.cli import main
from pbmserv.play import engine_of, replay
from pbmserv.store.db import open_database
from pbmserv.store.models import GameRecord

MATCHES = [("wari", "robot1 robot3", ""), ("superwari", "robot2 robot1", "-pits=6"),
           ("survival", "robot1 robot2", ""), ("serpent", "robot2 robot1", "-size=4"),
           ("survive", "robot1 robot2 robot3", "")]


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    """Two replays of the same mailbox: their outboxes and the first run's database."""
    path = tmp_path_factory.mktemp("selfplay")
    start = datetime(2026, 11, 1, 9, 0).astimezone()
    subjects = ["signup alice alice-pw", "set alice alice-pw mail turn"]  # only each game's end
    subjects += [f"{game} match alice alice-pw {robots} {params}".strip() for game, robots, params in MATCHES]
    mbox = write_mbox(path / "selfplay.mbox", [dated_mail("alice@example.org", subject, "",
                                                          start + timedelta(minutes=n), n + 1)
                                               for n, subject in enumerate(subjects)])
    outboxes = []
    for run in ("one", "two"):
        db = ["--db", f"sqlite:///{path / 'one.db'}"] if run == "one" else []
        assert main(["replay", str(mbox), "--outbox", str(path / run), *db]) == 0
        outboxes.append([(m["To"], m["Subject"], m.as_bytes()) for m in maildir_messages(path / run)])
    return outboxes, open_database(f"sqlite:///{path / 'one.db'}")


def test_every_game_finishes_with_legal_moves_only(replayed):
    _outboxes, sessions = replayed
    with sessions() as session:
        records = session.scalars(select(GameRecord).order_by(GameRecord.id)).all()
        assert [(r.game_type, r.status) for r in records] == [(game, "finished") for game, _, _ in MATCHES]
        for record in records:
            game = engine_of(record)
            assert not [m for m in record.moves if m.kind == "resign"], record.game_type  # no robot gave up
            assert game.result(replay(record)) is not None
            assert game.serialise(replay(record)) == record.state  # the log rebuilds the board exactly
            for number, move in enumerate(record.moves):
                if move.kind == "move":  # each move checks in the position before it
                    verdict = game.check(replay(record, number), move.seat, move.move)
                    assert verdict.ok and verdict.move == move.move, (record.game_type, number, verdict.error)


def test_the_watcher_gets_the_start_and_the_end_and_a_second_run_repeats(replayed):
    outboxes, _sessions = replayed
    assert outboxes[0] == outboxes[1]
    subjects = [subject for _to, subject, _raw in outboxes[0]]
    for game, _, _ in MATCHES:
        title = {"wari": "Wari", "superwari": "Super-Wari", "survival": "Survival", "serpent": "Serpent",
                 "survive": "Survive"}[game]
        assert f"New {title} Board 101" in " ".join(subjects) and f"{title} Board 101" in subjects

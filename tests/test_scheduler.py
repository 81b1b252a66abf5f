"""The scheduler and what games with time, several players acting at once and private
actions need of the server, shown with a small stand-in game registered for the test:
deadlines fired in order with the clock at each deadline (replay with jumping dates,
`tick`, `serve`), `ALL` subjects and `Waiting for:`, private comments, duration and
player parameters."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from conftest import maildir_messages, plain
from mailgen import mail, write_mbox
from pbmserv import games as registry
from pbmserv.cli import main
from pbmserv.commands.lines import meaning
from pbmserv.games.base import DurationParam, Game, Outcome, Param, PlayerParam, State, Verdict
from pbmserv.store.models import GameRecord


@dataclass
class ClockState(State):
    round: int = 1
    ready: list[int] = field(default_factory=list)
    starter: int = 0
    log: list[str] = field(default_factory=list)


class Clock(Game):
    """Every round all players send `ready` (or the round's deadline passes); after
    three rounds the starter wins. `tell` is private to the teller and seat 0."""

    name, title, min_players, max_players = "clock", "Clock", 2, 4
    own_deadlines = True
    params = (DurationParam("deadline", 3600, 60, 7 * 86400, "time for a round"),
              PlayerParam("first", -1, -1, -1, "the player who wins"))
    move_syntax, summary, help_text, template = "ready or tell", "a stand-in", "Stand-in.\n", "superwari.txt"

    def setup(self, players, params, chance):
        self.deadline = params["deadline"]
        return ClockState(starter=max(params["first"], 0))

    def to_act(self, state):
        return frozenset() if self.result(state) else frozenset({0, 1}) - set(state.ready)

    def check(self, state, seat, text):
        if text in ("ready", "tell"):
            return Verdict(move=text)
        return Verdict(error=f"send ready, {{seat{1 - seat}}} is waiting")

    def apply(self, state, seat, move, chance):
        state.log.append(f"{seat}:{move}")
        if move == "ready":
            state.ready.append(seat)
            if len(state.ready) == 2:
                self.next_round(state)

    def next_round(self, state):
        state.round += 1
        state.ready = []

    def timers(self, state):
        return {f"round {state.round}": self.deadline} if self.result(state) is None else {}

    def timeout(self, state, name):
        state.log.append(f"timeout {name}")
        self.next_round(state)

    def private_to(self, state, seat, move):
        return frozenset({seat, 0}) if move == "tell" else None

    def result(self, state):
        return self.resigned_outcome(state, 2) or (Outcome(winners=(state.starter,)) if state.round > 3 else None)

    def view(self, state, seat):
        return {"round": state.round}

    def serialise(self, state):
        return {"resigned": state.resigned, "round": state.round, "ready": state.ready,
                "starter": state.starter, "log": state.log}

    def restore(self, data):
        return ClockState(**data)


@pytest.fixture(autouse=True)
def clock_game(monkeypatch, tmp_path):
    monkeypatch.setitem(registry._registry, "clock", Clock())
    # get_game's words and the near-miss lookups are made once, from the games registered
    # by then (e4128b0): made again with the stand-in, and again without it after the test
    monkeypatch.setattr(registry, "_words", {})
    meaning.cache_clear()
    # the stand-in draws no board of its own: a one-line template
    monkeypatch.setattr("pbmserv.play.render_board", lambda game, view, names: f"Round {view['round']}\n")
    monkeypatch.setattr("pbmserv.render.render_board_html", lambda game, view, names: f"<p>Round {view['round']}</p>")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PBMSERV_SECURITY_PASSWORD_COST", "fast")
    yield
    meaning.cache_clear()


T0 = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)


def replies(outbox) -> list[tuple[str, str, str, str]]:
    """(To, Subject, Date, body) of every reply, in the order the server wrote them."""
    return [(m["To"], m["Subject"], m["Date"], plain(m))
            for m in maildir_messages(outbox)]


def test_replay_fires_every_deadline_in_between_in_order(tmp_path, capsys, serve_url):
    mails = [mail("alice@example.org", "signup alice alice-pw", "", T0, 1),
             mail("bob@example.org", "signup bob bob-pw", "", T0 + timedelta(minutes=1), 2),
             mail("alice@example.org", "clock challenge alice alice-pw bob -deadline=2h -first=bob", "",
                  T0 + timedelta(minutes=2), 3),
             mail("alice@example.org", "clock move 101 alice alice-pw ready", "", T0 + timedelta(minutes=30), 4),
             # five hours later: rounds 1 and 2 time out at 11:02 and 13:02, before this mail
             mail("bob@example.org", "clock move 101 bob bob-pw ready #4", "", T0 + timedelta(hours=5), 5)]
    url = serve_url
    assert main(["replay", str(write_mbox(tmp_path / "box.mbox", mails)), "--db", url, "--outbox", "out"]) == 0
    sent = replies(tmp_path / "out")
    deadline_mails = [(to, subject, date) for to, subject, date, body in sent if "Deadline passed" in body]
    assert deadline_mails == [
        ("alice@example.org", "Clock Board 101 ALL", "Mon, 02 Nov 2026 11:02:00 +0000"),
        ("bob@example.org", "Clock Board 101 ALL", "Mon, 02 Nov 2026 11:02:00 +0000"),
        ("alice@example.org", "Clock Board 101 ALL", "Mon, 02 Nov 2026 13:02:00 +0000"),
        ("bob@example.org", "Clock Board 101 ALL", "Mon, 02 Nov 2026 13:02:00 +0000")]
    first_deadline = next(body for _to, _s, _d, body in sent if "Deadline passed" in body)
    assert first_deadline.startswith("Summary of Clock Board 101\n\nWaiting for: alice, bob.\n"
                                     "Deadline passed: round 1.\n")
    # the last mail is move #4 (the two timeouts count as actions on the board)
    assert sent[-1][1] == "Clock Board 101 alice" and "It is alice's turn." in sent[-1][3]
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session
    with Session(create_engine(url)) as session:
        record = session.scalar(select(GameRecord))
        assert [(m.kind, m.seat, m.move, m.created_at) for m in record.moves] == [
            ("move", 0, "ready", datetime(2026, 11, 2, 9, 30)),
            ("timeout", -1, "round 1", datetime(2026, 11, 2, 11, 2)),
            ("timeout", -1, "round 2", datetime(2026, 11, 2, 13, 2)),
            ("move", 1, "ready", datetime(2026, 11, 2, 14, 0))]
        assert record.timers == {"round 3": "2026-11-02T13:02:00"}
        assert record.due_at == datetime(2026, 11, 2, 15, 2)
    assert main(["replay", str(tmp_path / "box.mbox"), "--outbox", "again"]) == 0
    assert [r[3] for r in replies(tmp_path / "again")] == [r[3] for r in sent]


def test_tick_fires_what_is_due_and_the_game_can_end_by_deadlines(server, monkeypatch, capsys):
    server.signup("alice", "bob")
    replies_ = server.send("alice@example.org", "clock challenge alice alice-pw bob")  # clock: 2026-11-01
    assert [r.subject for r in replies_] == ["New Clock Board 101 ALL"] * 2
    assert "Waiting for: alice, bob." in replies_[0].text
    monkeypatch.setenv("PBMSERV_DATABASE_URL", server.config.database.url)
    monkeypatch.setenv("PBMSERV_OUTBOUND_MAILDIR", "outbox")
    assert main(["tick"]) == 0
    assert capsys.readouterr().out == "3 deadlines passed; 0 robot moves played; 6 replies delivered.\n"
    with server.sessions() as session:
        record = session.scalar(select(GameRecord))
        assert (record.status, record.result, record.due_at) == ("finished", "Game won by alice.", None)
        assert [m.created_at - m.game.created_at for m in record.moves] == [
            timedelta(hours=1), timedelta(hours=2), timedelta(hours=3)]
    assert main(["tick"]) == 0
    assert capsys.readouterr().out == "0 deadlines passed; 0 robot moves played; 0 replies delivered.\n"


def test_a_private_action_shows_its_comment_only_to_the_seats_concerned(server):
    server.signup("alice", "bob", "carol")
    server.send("alice@example.org", "clock challenge alice alice-pw bob carol")
    told = server.send("bob@example.org", "clock move 101 bob bob-pw tell", "Psst, alice.")
    assert [(r.to, "Psst, alice." in r.text) for r in told] == [
        (["alice@example.org"], True), (["bob@example.org"], True), (["carol@example.org"], False)]
    said = server.send("alice@example.org", "clock move 101 alice alice-pw ready", "Hello all.")
    assert len(said) == 3 and all("alice writes:\nHello all." in r.text for r in said)


@pytest.mark.parametrize("text, value", [("90m", 5400), ("72h", 259200), ("3d", 259200), (" 2D ", 172800)])
def test_durations(text, value):
    assert DurationParam("deadline", 3600, 60, 7 * 86400, "").parse(text, []) == value


@pytest.mark.parametrize("text, error", [
    ("3w", "-deadline must be a duration such as 72h or 3d, not '3w'"),
    ("10", "-deadline must be a duration such as 72h or 3d, not '10'"),
    ("30d", "-deadline must be from 1m to 7d, not 30d"),
])
def test_bad_durations(text, error):
    with pytest.raises(ValueError, match=error):
        DurationParam("deadline", 3600, 60, 7 * 86400, "").parse(text, [])


def test_player_parameter_and_descriptions():
    first = PlayerParam("first", -1, -1, -1, "who starts")
    assert first.parse("BOB", ["alice", "bob"]) == 1
    with pytest.raises(ValueError, match=r"-first must name a player of this game \(alice, bob\), not 'carol'"):
        first.parse("carol", ["alice", "bob"])
    assert first.describe() == "-first=USERID: who starts"
    assert DurationParam("deadline", 259200, 3600, 30 * 86400, "per phase").describe() == \
        "-deadline=3d (1h to 30d): per phase"
    assert Param("size", 5, 4, 6, "cells a side").describe() == "-size=5 (4 to 6): cells a side"


def test_challenge_errors_for_bad_time_and_player_parameters(server):
    server.signup("alice", "bob")
    reply = server.one("alice@example.org", "clock challenge alice alice-pw bob -deadline=soon")
    assert reply.text.split("\n")[:2] == ["-deadline must be a duration such as 72h or 3d, not 'soon'.",
                                          "Send: clock challenge USERID PASSWORD OPPONENT ... [-NAME=VALUE ...]"]
    reply = server.one("alice@example.org", "clock challenge alice alice-pw bob -first=zed")
    assert reply.text.split("\n")[0] == "-first must name a player of this game (alice, bob), not 'zed'."


def test_serve_fires_a_deadline_while_it_runs(tmp_path, monkeypatch, serve_url):
    from test_smtp import RunningServer

    Clock.timers = lambda self, state: {f"round {state.round}": 1} if self.result(state) is None else {}
    try:
        running = RunningServer(tmp_path, url=serve_url)
        try:
            for message in [mail("alice@example.org", "signup alice alice-pw", "", T0, 1),
                            mail("bob@example.org", "signup bob bob-pw", "", T0, 2),
                            mail("alice@example.org", "clock challenge alice alice-pw bob", "", T0, 3)]:
                running.send(message)
            started = time.monotonic()
            found = running.replies(2 + 2 + 6, timeout=10)  # three one-second rounds, two players
            assert time.monotonic() - started < 8
        finally:
            running.stop()
    finally:
        del Clock.timers
    assert [r["Subject"] for r in found[-2:]] == ["Clock Board 101", "Clock Board 101"]
    assert "Game won by alice." in plain(found[-1])

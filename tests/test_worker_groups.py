"""Mails that wait together are played in one transaction (`Worker.play_together`): one
commit for the group, the same replies as one by one, and a mail that fails or kills
the process is dealt with alone, the others of its group answered. On SQLite only: on
PostgreSQL, where several workers play at once, each mail has its own transaction."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import event, select, update

from conftest import Died, die_on, make_mail
from pbmserv.store.models import Inbound
from pbmserv.store.queue import enqueue
from pbmserv.worker import SET_ASIDE, Handler, Worker

ALICE, BOB = "alice@example.org", "bob@example.org"


def queue(server, sender: str, subject: str, body: str = "") -> str:
    """Store a mail without playing it; its Message-ID."""
    server.count += 1
    server.clock += timedelta(minutes=1)
    message_id = f"<group{server.count}@example.org>"
    enqueue(server.sessions, make_mail(sender, subject, body, date=server.clock, message_id=message_id),
            server.clock)
    return message_id


def statuses(server) -> dict[str, tuple[str, int, str]]:
    with server.sessions() as session:
        return {row.message_id: (row.status, row.attempts, row.error) for row in session.scalars(select(Inbound))}


def commits_of(server, action) -> int:
    engine = server.sessions.kw["bind"]
    committed = []

    def note(_connection):
        committed.append(1)
    event.listen(engine, "commit", note)
    try:
        action()
    finally:
        event.remove(engine, "commit", note)
    return len(committed)


def test_waiting_mails_are_played_in_one_transaction_with_the_replies_of_one_by_one(server):
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    for sender, line in ((ALICE, "superwari move 101 alice alice-pw c"), (BOB, "superwari move 101 bob bob-pw a"),
                         (ALICE, "superwari move 101 alice alice-pw d"), (BOB, "help")):
        queue(server, sender, line)
    commits = commits_of(server, server.worker.run_pending)
    if server.sessions.kw["bind"].dialect.name == "sqlite":
        assert commits == 2  # the starts, the group
    else:  # several workers play at once: a group would let a mail overtake an earlier one
        assert commits == 8  # each mail's start, and its play
    replies = server.collect(lambda: None)
    assert [(r.subject, r.to) for r in replies] == [
        ("Super-Wari Board 101 bob", [ALICE]), ("Super-Wari Board 101 bob", [BOB]),
        ("Super-Wari Board 101 alice", [ALICE]), ("Super-Wari Board 101 alice", [BOB]),
        ("Super-Wari Board 101 bob", [ALICE]), ("Super-Wari Board 101 bob", [BOB]),
        ("pbmserv help", [BOB])]
    assert "#1 c   #2 a" in replies[-2].body and "#3 d" in replies[-2].body and "Next move: #4" in replies[-2].body
    assert {status for status, _starts, _error in statuses(server).values()} == {"done"}


def test_a_mail_that_fails_in_a_group_fails_alone_and_the_others_are_answered(server, monkeypatch):
    server.signup("alice", "bob")
    handle = Handler.handle

    def broken(self):
        if b"broken" in self.row.raw:
            raise RuntimeError("a bug met by this mail only")
        return handle(self)
    monkeypatch.setattr(Handler, "handle", broken)
    first = queue(server, ALICE, "help")
    bad = queue(server, BOB, "help", "broken")
    last = queue(server, BOB, "list")
    replies = server.collect(server.worker.run_pending)
    assert [(r.subject, r.to) for r in replies] == [("pbmserv help", [ALICE]), ("pbmserv list", [BOB])]
    found = statuses(server)
    assert found[first][0] == found[last][0] == "done"
    assert found[bad][0] == "failed" and "a bug met by this mail only" in found[bad][2]


def test_a_mail_that_kills_the_process_in_a_group_is_set_aside_alone(server, monkeypatch):
    server.signup("alice", "bob")
    die_on(monkeypatch, b"poison")
    before = queue(server, ALICE, "help")
    poison = queue(server, BOB, "help", "poison")
    after = queue(server, BOB, "list")
    answered = []
    for _restart in range(3):  # the group dies, then the poison alone, twice more
        with pytest.raises(Died):
            answered += server.collect(server.worker.run_pending)
    answered += server.collect(server.worker.run_pending)  # the fourth start sets it aside
    found = statuses(server)
    assert found[poison] == ("failed", 3, SET_ASIDE)
    assert found[before][0] == found[after][0] == "done" and found[before][1] <= 2 and found[after][1] <= 3
    assert sorted(r.subject for r in answered) == ["pbmserv help", "pbmserv list"]  # each once


def test_a_mail_begun_before_is_counted_again_only_after_the_process_is_warm(server, monkeypatch):
    """A fresh process's first mail costs it about 25 mails' time (templates, mappers);
    a process killed again during that time must not count it against a mail begun by
    the process that died, or a restart loop sets an innocent mail aside."""
    server.signup("alice", "bob")
    warm_up = Worker.warm_up
    seen = []

    def watched(self):
        seen.append(dict(statuses(server)))
        warm_up(self)
    monkeypatch.setattr(Worker, "warm_up", watched)
    queue(server, ALICE, "help")
    server.collect(server.worker.run_pending)
    assert seen == []  # never begun: nothing to protect
    crashed = queue(server, BOB, "help")
    with server.sessions.begin() as session:
        session.execute(update(Inbound).where(Inbound.message_id == crashed).values(attempts=1))
    replies = server.collect(server.worker.run_pending)
    assert [found[crashed] for found in seen] == [("queued", 1, "")]  # warmed before this start
    assert statuses(server)[crashed] == ("done", 2, "")
    assert [(r.subject, r.to) for r in replies] == [("pbmserv help", [BOB])]
    again = queue(server, ALICE, "list")
    with server.sessions.begin() as session:
        session.execute(update(Inbound).where(Inbound.message_id == again).values(attempts=1))
    server.collect(server.worker.run_pending)
    assert len(seen) == 1  # once a process

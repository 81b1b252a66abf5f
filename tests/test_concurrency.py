"""Conflicting moves sent at once, over many SMTP connections and from several
processes on one database: exactly one is played per turn, every other one gets a
clear refusal, nothing is lost, and no "database is locked" ever reaches a player."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from datetime import datetime
from pathlib import Path

from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from conftest import make_mail, plain
from mailgen import game_mails
from pbmserv.store.models import GameRecord, Inbound
from test_smtp import RunningServer

ROOT = Path(__file__).parent.parent


def test_conflicting_moves_over_many_connections_at_once(tmp_path, serve_url):
    running = RunningServer(tmp_path, url=serve_url)
    try:
        for message in game_mails("superwari", seed=1)[:3]:  # two sign-ups and the challenge
            running.send(message)
        running.replies(4)
        moves = "abcdefgh"
        go = threading.Barrier(len(moves))

        def send(letter: str) -> None:
            raw = make_mail("alice@example.org", f"superwari move 101 alice alice-secret {letter} #1", "",
                            date=datetime(2026, 11, 1), message_id=f"<race-{letter}@x>")
            go.wait(5)
            with running.client() as client:
                client.sendmail("alice@example.org", ["pbmserv@localhost"], raw)

        threads = [threading.Thread(target=send, args=(letter,)) for letter in moves]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        replies = running.replies(4 + 2 + 7)  # one move to both players, seven refusals
    finally:
        running.stop()
    answers = replies[4:]
    played = [r for r in answers if r["Subject"] == "Super-Wari Board 101 bob"]
    refused = [plain(r) for r in answers if r["Subject"] == "Super-Wari Board 101 Error"]
    assert len(played) == 2 and len(refused) == 7
    assert all(" received as move #1, but the next move on board 101 is #2." in text for text in refused)
    assert not [r for r in replies if b"locked" in r.as_bytes().lower()]
    with running.sessions() as session:
        record = session.scalar(select(GameRecord))
        assert len(record.moves) == 1 and record.version == 2
        assert set(session.scalars(select(Inbound.status))) == {"done"}


def test_conflicting_moves_from_several_processes_on_one_database(tmp_path, serve_url):
    """Eight `pbmserv deliver --process` at once, each storing one conflicting move and
    then working through the queue: every mail is processed once, one move is played."""
    env = {"PATH": os.environ["PATH"], "PBMSERV_DATABASE_URL": serve_url,
           "PBMSERV_OUTBOUND_MAILDIR": str(tmp_path / "outbox"), "PBMSERV_SECURITY_PASSWORD_COST": "fast",
           "PBMSERV_SERVER_SEED": "test", "PBMSERV_SECURITY_TRUST_FROM": "true"}

    def deliver(raw: bytes) -> subprocess.Popen:
        process = subprocess.Popen([sys.executable, "-m", "pbmserv", "deliver", "--process"], cwd=ROOT, env=env,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        process.stdin.write(raw)
        process.stdin.close()
        return process

    for message in game_mails("superwari", seed=1)[:3]:
        assert deliver(message.as_bytes()).wait(60) == 0
    racers = [deliver(make_mail("alice@example.org", f"superwari move 101 alice alice-secret {letter} #1", "",
                                date=datetime(2026, 11, 2), message_id=f"<proc-{letter}@x>"))
              for letter in "abcdefgh"]
    results = [(process.wait(60), process.stderr.read().decode()) for process in racers]
    assert [code for code, _err in results] == [0] * 8, results
    with Session(create_engine(env["PBMSERV_DATABASE_URL"])) as session:
        assert sorted(session.scalars(select(Inbound.status))) == ["done"] * 11, [(r.status, r.attempts, r.error[-300:]) for r in session.scalars(select(Inbound))]
        record = session.scalar(select(GameRecord))
        assert len(record.moves) == 1
    bodies = [path.read_bytes() for path in (tmp_path / "outbox" / "new").iterdir()]
    assert len(bodies) == 2 + 2 + 2 + 7  # sign-ups, challenge, the move, seven refusals
    assert not [b for b in bodies if b"locked" in b.lower()]

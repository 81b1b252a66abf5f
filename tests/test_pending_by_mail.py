"""The move helpers (`queue`, `preview`, `submit`, `confirm`) by mail, end to end:
through `pbmserv replay` and through a real `serve` over SMTP. Their rules in detail
are in test_reply_play.py."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from sqlalchemy import select

from conftest import maildir_messages, plain
from mailgen import mail, write_mbox
from pbmserv.cli import main
from pbmserv.store.models import GameRecord
from test_smtp import RunningServer

LINES = [("alice", "signup alice alice-secret"), ("bob", "signup bob bob-secret"),
         ("alice", "superwari challenge alice alice-secret bob"),
         ("bob", "superwari queue 101 bob bob-secret a"),
         ("alice", "superwari preview 101 alice alice-secret c; a; d"),
         ("alice", "superwari submit 101 alice alice-secret c"),
         ("alice", "superwari confirm 101 alice alice-secret")]

# (recipient, subject) of every reply, in order: the confirmed move goes to both, then
# bob's queued move is played for him and goes to both, marked (auto)
EXPECTED = [("alice", "pbmserv signup"), ("bob", "pbmserv signup"),
            ("alice", "New Super-Wari Board 101 alice"), ("bob", "New Super-Wari Board 101 alice"),
            ("bob", "Super-Wari Board 101 queue"), ("alice", "Preview: Super-Wari Board 101 alice"),
            ("alice", "Submitted: Super-Wari Board 101 alice"),
            ("alice", "Super-Wari Board 101 bob"), ("bob", "Super-Wari Board 101 bob"),
            ("alice", "Super-Wari Board 101 alice"), ("bob", "Super-Wari Board 101 alice")]


def helper_mails() -> list:
    clock = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
    return [mail(f"{who}@example.org", subject, "", clock + timedelta(minutes=10 * n), n + 1)
            for n, (who, subject) in enumerate(LINES)]


def check(replies) -> None:
    assert [(r["To"].split("@")[0], r["Subject"]) for r in replies] == EXPECTED
    preview = plain(replies[5])
    assert "\nPreview after c; a; d: nothing was played.\n" in preview
    auto = plain(replies[9])
    assert "\nbob's queued move was played (auto).\n" in auto
    assert "\n  #1 c         #2 a (auto)\n" in auto
    assert "\nNext move: #3\n" in auto


def test_move_helpers_through_replay(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in ("PBMSERV_SERVER_SEED", "PBMSERV_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    box = write_mbox(tmp_path / "helpers.mbox", helper_mails())
    assert main(["replay", str(box), "--outbox", "out"]) == 0
    assert "Replayed 7 mails: 7 answered, 0 ignored (loop rules), 0 duplicates, 0 failed." in capsys.readouterr().out
    check(maildir_messages(tmp_path / "out"))


def test_move_helpers_through_serve(tmp_path, serve_url):
    running = RunningServer(tmp_path, url=serve_url)
    try:
        for message in helper_mails():
            running.send(message)
        replies = running.replies(len(EXPECTED))
        check(replies)
        with running.sessions() as session:
            record = session.scalar(select(GameRecord))
            assert [(m.seat, m.move, m.auto) for m in record.moves] == [(0, "c", False), (1, "a", True)]
            assert record.pending == []
    finally:
        running.stop()

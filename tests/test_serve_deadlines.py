"""Nag and forfeit under a running `serve`, and downtime given back at its start.

Hours cannot pass in a test, so the game is made older in the database between two
runs of the server: its turn clock (and, for downtime, the server's last sign of life)
is moved back, as if the time had passed.
"""

from __future__ import annotations

import email.utils
import time
from datetime import datetime, timedelta
from email.message import EmailMessage

from sqlalchemy import select

from pbmserv.play import set_due
from pbmserv.scheduler import ALIVE
from pbmserv.server import utcnow
from pbmserv.store.db import open_database
from pbmserv.store.models import GameRecord, Setting
from test_smtp import RunningServer, read_maildir
from conftest import plain


def mail(sender: str, subject: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = f"{sender}@example.org"
    message["To"] = "pbmserv@localhost"
    message["Subject"] = subject
    message["Date"] = email.utils.format_datetime(datetime.now().astimezone())
    message["Message-ID"] = email.utils.make_msgid(domain="example.org")
    message.set_content("")
    return message


def start_game(tmp_path, serve_url) -> None:
    """alice challenges bob with a 1 h reminder and a 2 h forfeit; the server stops."""
    running = RunningServer(tmp_path, url=serve_url)
    try:
        for message in (mail("alice", "signup alice alice-pw"), mail("bob", "signup bob bob-pw"),
                        mail("alice", "superwari challenge alice alice-pw bob -nagtime=1h -forfeittime=2h")):
            running.send(message)
        running.replies(4)
    finally:
        running.stop()


def age(url: str, hours: int, server_was_down: bool) -> datetime:
    """Make the game `hours` older; with `server_was_down`, make the server's last sign
    of life as old too. The forfeit time the board showed before."""
    sessions = open_database(url)
    with sessions.begin() as session:
        record = session.scalar(select(GameRecord))
        before = record.due_at + timedelta(hours=1)  # due_at is the nag; the forfeit is an hour later
        record.clocks = {seat: {**clock, "since": (datetime.fromisoformat(clock["since"]) - timedelta(hours=hours))
                                .isoformat()} for seat, clock in record.clocks.items()}
        set_due(record)
        if server_was_down:
            session.get(Setting, ALIVE).value = (utcnow() - timedelta(hours=hours)).isoformat()
    sessions.kw["bind"].dispose()
    return before


def subjects(tmp_path) -> list[str]:
    return [message["Subject"] for message in read_maildir(tmp_path / "outbox")]


def test_serve_nags_and_forfeits_a_player_whose_time_ran_out(tmp_path, serve_url):
    start_game(tmp_path, serve_url)
    age(serve_url, 3, server_was_down=False)  # three hours passed while the server ran
    running = RunningServer(tmp_path, url=serve_url)
    try:
        replies = running.replies(7)
    finally:
        running.stop()
    # dated when they fell due, so before the sign-ups they followed
    late = [m for m in replies if not m["Subject"].startswith(("pbmserv signup", "New "))]
    assert sorted((m["Subject"], m["To"]) for m in late) == [
        ("Nag: Super-Wari Board 101 alice", "alice@example.org"),
        ("Super-Wari Board 101", "alice@example.org"), ("Super-Wari Board 101", "bob@example.org")]
    nag, forfeit = (plain(m) for m in late[:2])
    assert "\nReminder: it has been alice's turn since " in nag
    assert "\nGame won by bob.\nalice forfeited: no move for 2 hours.\n" in forfeit
    with open_database(serve_url)() as session:
        record = session.scalar(select(GameRecord))
        assert (record.status, [(m.seat, m.kind) for m in record.moves]) == ("finished", [(0, "forfeit")])


def test_serve_gives_back_the_time_it_was_down(tmp_path, serve_url):
    start_game(tmp_path, serve_url)
    forfeit_before = age(serve_url, 3, server_was_down=True)  # the server was down those three hours
    running = RunningServer(tmp_path, url=serve_url)
    try:
        time.sleep(1.5)  # the scheduler has run: nothing may fall due
        assert len(subjects(tmp_path)) == 4
        running.send(mail("bob", "superwari show 101"))
        shown = plain(running.replies(5)[4])
    finally:
        running.stop()
    with open_database(serve_url)() as session:
        record = session.scalar(select(GameRecord))
        assert (record.status, record.moves) == ("active", [])
        forfeit_now = record.due_at + timedelta(hours=1)
    assert abs(forfeit_now - forfeit_before) < timedelta(minutes=1)  # the three hours were given back
    assert f"\nalice forfeits if no move by {forfeit_now:%Y-%m-%d %H:%M} UTC.\n" in shown


def test_vacation_by_mail_through_serve_and_replay(tmp_path, monkeypatch, capsys, serve_url):
    """A vacation taken by mail holds off a forfeit under `replay` (dates jump) and is
    shown on the board `serve` mails."""
    from mailgen import mail as dated_mail, write_mbox
    from pbmserv.cli import main

    start = datetime(2026, 11, 1, 9, 0).astimezone()
    lines = [("alice", "signup alice alice-pw", 0), ("bob", "signup bob bob-pw", 1),
             ("alice", "superwari challenge alice alice-pw bob -nagtime=off -forfeittime=2d", 2),
             ("alice", "vacation alice alice-pw 3", 3),
             ("bob", "superwari show 101", 60 * 24 * 4),  # day 4: alice is due on day 5, not 2
             ("bob", "superwari show 101", 60 * 24 * 6)]  # day 6: she has forfeited
    mails = [dated_mail(f"{who}@example.org", subject, "", start + timedelta(minutes=minutes), n + 1)
             for n, (who, subject, minutes) in enumerate(lines)]
    monkeypatch.chdir(tmp_path)
    for name in ("PBMSERV_SERVER_SEED", "PBMSERV_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    assert main(["replay", str(write_mbox(tmp_path / "away.mbox", mails)), "--outbox", "out"]) == 0
    shows = [plain(m) for m in read_maildir(tmp_path / "out")
             if m["To"] == "bob@example.org" and m["Subject"].startswith("Super-Wari Board 101")]
    assert "\nIt is alice's turn.\n" in shows[0] and "alice forfeits if no move by 2026-11-06" in shows[0]
    assert "\nGame won by bob.\nalice forfeited: no move for 2 days.\n" in shows[1]

    running = RunningServer(tmp_path / "serve", url=serve_url)
    try:
        for message in mails[:4]:
            running.send(message)
        replies = running.replies(5)
        assert replies[4]["Subject"] == "pbmserv vacation"
        running.send(mail("bob", "superwari show 101"))
        shown = plain(running.replies(6)[5])
        assert "\nOn vacation: alice until " in shown
    finally:
        running.stop()

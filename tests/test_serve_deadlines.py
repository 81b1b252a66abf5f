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


def open_sessions(tmp_path):
    return open_database(f"sqlite:///{tmp_path / 'serve.db'}")


def mail(sender: str, subject: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = f"{sender}@example.org"
    message["To"] = "pbmserv@localhost"
    message["Subject"] = subject
    message["Date"] = email.utils.format_datetime(datetime.now().astimezone())
    message["Message-ID"] = email.utils.make_msgid(domain="example.org")
    message.set_content("")
    return message


def start_game(tmp_path) -> None:
    """alice challenges bob with a 1 h reminder and a 2 h forfeit; the server stops."""
    running = RunningServer(tmp_path)
    try:
        for message in (mail("alice", "signup alice alice-pw"), mail("bob", "signup bob bob-pw"),
                        mail("alice", "superwari challenge alice alice-pw bob -nagtime=1h -forfeittime=2h")):
            running.send(message)
        running.replies(4)
    finally:
        running.stop()


def age(tmp_path, hours: int, server_was_down: bool) -> datetime:
    """Make the game `hours` older; with `server_was_down`, make the server's last sign
    of life as old too. The forfeit time the board showed before."""
    sessions = open_sessions(tmp_path)
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


def test_serve_nags_and_forfeits_a_player_whose_time_ran_out(tmp_path):
    start_game(tmp_path)
    age(tmp_path, 3, server_was_down=False)  # three hours passed while the server ran
    running = RunningServer(tmp_path)
    try:
        replies = running.replies(7)
    finally:
        running.stop()
    # dated when they fell due, so before the sign-ups they followed
    late = [m for m in replies if not m["Subject"].startswith(("pbmserv signup", "New "))]
    assert sorted((m["Subject"], m["To"]) for m in late) == [
        ("Nag: Super-Wari Board 101 alice", "alice@example.org"),
        ("Super-Wari Board 101", "alice@example.org"), ("Super-Wari Board 101", "bob@example.org")]
    nag, forfeit = (m.get_payload(decode=True).decode() for m in late[:2])
    assert "\nReminder: it has been alice's turn since " in nag
    assert "\nGame won by bob.\nalice forfeited: no move for 2 hours.\n" in forfeit
    with open_sessions(tmp_path)() as session:
        record = session.scalar(select(GameRecord))
        assert (record.status, [(m.seat, m.kind) for m in record.moves]) == ("finished", [(0, "forfeit")])


def test_serve_gives_back_the_time_it_was_down(tmp_path):
    start_game(tmp_path)
    forfeit_before = age(tmp_path, 3, server_was_down=True)  # the server was down those three hours
    running = RunningServer(tmp_path)
    try:
        time.sleep(1.5)  # the scheduler has run: nothing may fall due
        assert len(subjects(tmp_path)) == 4
        running.send(mail("bob", "superwari show 101"))
        shown = running.replies(5)[4].get_payload(decode=True).decode()
    finally:
        running.stop()
    with open_sessions(tmp_path)() as session:
        record = session.scalar(select(GameRecord))
        assert (record.status, record.moves) == ("active", [])
        forfeit_now = record.due_at + timedelta(hours=1)
    assert abs(forfeit_now - forfeit_before) < timedelta(minutes=1)  # the three hours were given back
    assert f"\nalice forfeits if no move by {forfeit_now:%Y-%m-%d %H:%M} UTC.\n" in shown

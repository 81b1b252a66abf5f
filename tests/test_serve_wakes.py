"""What `serve` wakes after the worker played mail (`Server.wake_for_played`): the
scheduler only when something falls due before it would wake by itself, the robots
only when a board waits for one; both when that cannot be read. Waking both after
every batch cost each a pass (and a write turn) that found nothing to do."""

from __future__ import annotations

import asyncio
import email
import threading
from datetime import datetime, timedelta

from sqlalchemy.exc import OperationalError

import pbmserv.server
from pbmserv.scheduler import due_and_robots
from pbmserv.server import Server
from pbmserv.store.queue import enqueue

from conftest import make_mail
from test_smtp import RunningServer

ALICE = "alice@example.org"


def woken(server, sleeps_until: datetime | None) -> tuple[bool, bool]:
    """(the scheduler, the robots): whether each is woken after mail was played, with
    the scheduler asleep until `sleeps_until` (None: it is running)."""
    async def played() -> tuple[bool, bool]:
        serving = Server(server.config, server.sessions, server.transport, roles=("scheduler", "robots"))
        serving.sleeps_until = sleeps_until
        await serving.wake_for_played()
        return serving.schedule.is_set(), serving.robots.is_set()
    found = []  # in a thread of its own: a browser test may leave this one's loop running
    thread = threading.Thread(target=lambda: found.append(asyncio.run(played())))
    thread.start()
    thread.join(30)
    return found[0]


def test_the_scheduler_is_woken_only_for_a_moment_before_it_would_wake(server):
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(ALICE, "superwari move 101 alice alice-pw c")
    due, robots_wait = due_and_robots(server.sessions)
    assert due is not None and due > server.clock and not robots_wait  # bob's nag
    assert woken(server, due + timedelta(seconds=1)) == (True, False)
    assert woken(server, due) == (False, False)  # it wakes for that moment anyway
    assert woken(server, due - timedelta(days=1)) == (False, False)
    assert woken(server, None) == (True, False)  # running: it looks again after this pass


def test_a_board_waiting_for_a_robot_wakes_the_robots(server):
    server.signup("alice")
    server.send(ALICE, "wari challenge alice alice-pw robot3")
    server.clock += timedelta(minutes=1)
    enqueue(server.sessions, make_mail(ALICE, "wari move 101 alice alice-pw c", date=server.clock,
                                       message_id="<robot-turn@example.org>"), server.clock)
    assert server.worker.run_pending() == 1  # played, and the robots not yet asked
    due, robots_wait = due_and_robots(server.sessions)
    assert robots_wait
    assert woken(server, due or datetime(3000, 1, 1)) == (False, True)


def test_when_the_due_moments_cannot_be_read_both_are_woken(server, monkeypatch):
    def locked(_sessions):
        raise OperationalError("SELECT", {}, Exception("database is locked"))
    monkeypatch.setattr(pbmserv.server, "due_and_robots", locked)
    assert woken(server, datetime(3000, 1, 1)) == (True, True)


def test_a_robot_answers_a_move_sent_to_serve(tmp_path):
    running = RunningServer(tmp_path)
    try:
        for number, subject in enumerate(["signup alice alice-pw", "wari challenge alice alice-pw robot3",
                                          "wari move 101 alice alice-pw c"]):
            running.send(email.message_from_bytes(make_mail(ALICE, subject, date=datetime.now(),
                                                            message_id=f"<robot{number}@example.org>")))
        subjects = [message["Subject"] for message in running.replies(4)]
    finally:
        running.stop()
    assert subjects == ["pbmserv signup", "New Wari Board 101 alice", "Wari Board 101 robot3",
                        "Wari Board 101 alice"]

"""Three `pbmserv serve` processes on one PostgreSQL database, under load, one of them
SIGKILLed midway: nothing is lost and nothing is done twice.

Each process takes every role (listener, worker, sender, scheduler) and has its own
port; all write replies into one Maildir. The load:

- nine Super-Wari games played move by move, each move sent to one of the servers in
  turn; every third move is sent twice at once, as two different mails to two
  different servers, of which exactly one may be applied (a board's actions are
  serialised);
- twelve boards whose players never move, set up three weeks ago, so that their
  reminders are due at once and their forfeits fall due one after another while the
  load runs (each deadline fires once, whichever scheduler is first);
- a stream of sign-ups.

A mail whose server dies before its 250 is sent again to another server, as a real MTA
would. Afterwards: every mail acknowledged is stored once and played once; every game's
moves are exactly the moves sent, once each; every forfeit and reminder happened once;
every reply is in the Maildir once, and no reply was delivered by two senders (each
was delivered in one attempt).

Runs when TEST_DATABASE_URL names a PostgreSQL server; SQLite is one process's database.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import random
import re
import smtplib
import threading
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import func, select

from conftest import POSTGRESQL, Databases
from pbmserv.config import load_config
from pbmserv.games import get_game
from pbmserv.play import replay
from pbmserv.store.db import open_database
from pbmserv.store.models import GameRecord, Inbound, Outbound
from pbmserv.store.queue import enqueue
from pbmserv.worker import Worker
from test_serve_process import HOST, SERVER_ADDRESS, ServeProcess, base_env, free_port, outbox, wait_for

pytestmark = pytest.mark.skipif(not POSTGRESQL, reason="no PostgreSQL: set TEST_DATABASE_URL to run these")

PLAYED = 9  # games played during the load
MOVES = 15  # moves sent in each
IDLE = 12  # boards whose forfeits fall due during the load
SIGNUPS = 40
SETTLE_SECONDS = 90.0


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def command_mail(userid: str, subject: str, tag: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = f"{userid}@example.org"
    message["To"] = SERVER_ADDRESS
    message["Subject"] = subject
    message["Date"] = email.utils.format_datetime(datetime.now(timezone.utc))
    message["Message-ID"] = f"<kill-{tag}@example.org>"
    message.set_content("")
    return message


def maildir_name(message_id: str) -> str:
    """The file name MaildirTransport gives a reply."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", message_id.strip("<>"))


class Cluster:
    """Three servers on one database; a mail goes to its preferred server, or on to the
    next while none gives a 250 (the way an MTA retries another MX)."""

    def __init__(self, tmp: Path, url: str, count: int = 3):
        self.ports = [free_port() for _ in range(count)]
        # The idle boards' challenges were played three weeks ago: their replies, once
        # delivered, are older than the 14 days a delivered reply is kept, and the
        # scheduler's first retention pass would delete the rows this test counts (the
        # sender's own process now delivers them before that pass).
        env = dict(PBMSERV_DATABASE_URL=url, PBMSERV_LIMITS_KEEP_RAW_DAYS="60")
        self.servers = [ServeProcess(tmp, base_env(tmp, port, **env), f"serve{n}") for n, port in enumerate(self.ports)]
        for server, port in zip(self.servers, self.ports):
            server.wait_listening(port)
        self.acked: list[str] = []  # Message-IDs that got a 250
        self.lock = threading.Lock()

    def send(self, message: EmailMessage, preferred: int) -> None:
        raw = message.as_bytes(policy=email.policy.SMTP)
        for attempt in range(30):
            port = self.ports[(preferred + attempt) % len(self.ports)]
            try:
                with smtplib.SMTP(HOST, port, timeout=20, local_hostname="localhost") as client:
                    client.sendmail(str(message["From"]), [SERVER_ADDRESS], raw)
            except (smtplib.SMTPException, OSError):
                time.sleep(0.05)
                continue
            with self.lock:
                self.acked.append(message["Message-ID"])
            return
        raise AssertionError(f"no server took {message['Message-ID']}: {self.stderr()}")

    def kill(self, number: int) -> None:
        self.servers[number].proc.kill()
        assert self.servers[number].proc.wait(10) == -9

    def stderr(self) -> str:
        return "\n".join(f"--- serve{n}\n{server.stderr[-2000:]}" for n, server in enumerate(self.servers))

    def close(self) -> None:
        for server in self.servers:
            server.close()


def prepare(url: str, tmp: Path) -> None:
    """Sign up every player and open every board before the servers start: the idle
    boards were challenged three weeks ago (a mail is played at its arrival time), one
    every two seconds, so that their 21-day forfeits fall due one by one from now on."""
    config = load_config(environ={}).with_overrides(
        database={"url": url}, security={"password_cost": "fast", "trust_from": True}, server={"seed": "test"},
        outbound={"transport": "maildir", "maildir": str(outbox(tmp))})
    sessions = open_database(url)
    now = utcnow()
    pairs = [(f"p{n}a", f"p{n}b") for n in range(PLAYED)] + [(f"i{n}a", f"i{n}b") for n in range(IDLE)]
    for a, b in pairs:
        for userid in (a, b):
            enqueue(sessions, command_mail(userid, f"signup {userid} {userid}-pw", f"signup-{userid}").as_bytes(), now)
    for n, (a, b) in enumerate(pairs):
        idle = n - PLAYED
        at = now if idle < 0 else now - timedelta(days=21) + timedelta(seconds=4 + 2 * idle)
        enqueue(sessions, command_mail(a, f"superwari challenge {a} {a}-pw {b}", f"challenge-{n}").as_bytes(), at)
    Worker(sessions, config).run_pending()
    with sessions() as session:
        assert session.scalars(select(Inbound.status).distinct()).all() == ["done"]
        assert session.scalar(select(func.count(GameRecord.id))) == len(pairs)
    sessions.kw["bind"].dispose()


def play(cluster: Cluster, sessions, board: int, players: tuple[str, str], sent: list[str],
         progress: threading.Semaphore) -> None:
    """One game, move by move: each move is sent, then waited for (applied once) before
    the next; every third one twice at once, to two servers."""
    game = get_game("superwari")
    rng = random.Random(board)
    state = game.setup(2, {p.name: p.default for p in game.params}, None)
    for number in range(1, MOVES + 1):
        seat = min(game.to_act(state))
        move = rng.choice(game.legal_moves(state, seat))
        userid = players[seat]
        subject = f"superwari move {board} {userid} {userid}-pw {move}"
        copies = [command_mail(userid, subject, f"move-{board}-{number}-{copy}")
                  for copy in range(2 if number % 3 == 0 else 1)]
        threads = [threading.Thread(target=cluster.send, args=(mail, board + n)) for n, mail in enumerate(copies)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        ids = [mail["Message-ID"] for mail in copies]

        def played() -> bool:
            with sessions() as session:
                return session.scalar(select(func.count(Inbound.id)).where(
                    Inbound.message_id.in_(ids), Inbound.status != "queued")) == len(ids)
        assert wait_for(played, 30), f"board {board} move {number} was not played: {cluster.stderr()}"
        game.apply(state, seat, move, None)
        sent.append(move)
        progress.release()


def test_three_servers_one_killed_under_load_lose_and_double_nothing(tmp_path):
    databases = Databases("postgresql")
    cluster = None
    sessions = None
    try:
        url = databases.new()
        prepare(url, tmp_path)
        cluster = Cluster(tmp_path, url)
        sessions = open_database(url)
        with sessions() as session:
            boards = {record.board: tuple(seat.user.userid for seat in sorted(record.seats, key=lambda s: s.seat))
                      for record in session.scalars(select(GameRecord))}
        played_boards = {board: players for board, players in boards.items() if players[0].startswith("p")}
        idle_boards = {board: players for board, players in boards.items() if players[0].startswith("i")}
        assert len(played_boards) == PLAYED and len(idle_boards) == IDLE

        progress = threading.Semaphore(0)
        sent: dict[int, list[str]] = {board: [] for board in played_boards}
        failures: list[BaseException] = []

        def guarded(target, *args):
            try:
                target(*args)
            except BaseException as error:  # noqa: BLE001 - reported by the main thread
                failures.append(error)

        def signups():
            for n in range(SIGNUPS):
                cluster.send(command_mail(f"s{n}", f"signup s{n} s{n}-pw", f"signup-s{n}"), n)
                time.sleep(0.05)

        threads = [threading.Thread(target=guarded, args=(play, cluster, sessions, board, players, sent[board],
                                                          progress)) for board, players in played_boards.items()]
        threads.append(threading.Thread(target=guarded, args=(signups,)))
        for thread in threads:
            thread.start()
        for _ in range(PLAYED * MOVES * 2 // 5):  # two fifths of the moves in: the kill
            assert progress.acquire(timeout=60), f"the load stalled: {failures} {cluster.stderr()}"
        cluster.kill(1)
        for thread in threads:
            thread.join(120)
        assert not failures, failures

        def settled() -> bool:
            with sessions() as session:
                return (session.scalar(select(func.count(Inbound.id)).where(Inbound.status == "queued")) == 0
                        and session.scalar(select(func.count(Outbound.id)).where(Outbound.status == "queued")) == 0
                        and session.scalar(select(func.count(GameRecord.id)).where(
                            GameRecord.board.in_(idle_boards), GameRecord.status == "active")) == 0)
        assert wait_for(settled, SETTLE_SECONDS, 0.25), f"work was left undone: {cluster.stderr()}"

        game = get_game("superwari")
        with sessions() as session:
            inbound = {row.message_id: row for row in session.scalars(select(Inbound))}
            # every mail acknowledged is stored once (Message-IDs are unique) and played
            assert set(cluster.acked) <= set(inbound)
            assert Counter(row.status for row in inbound.values()) == {"done": len(inbound)}
            replied = set(session.scalars(select(Outbound.inbound_id).where(Outbound.inbound_id.is_not(None))))
            assert {row.id for row in inbound.values()} == replied  # and answered

            for record in session.scalars(select(GameRecord)):
                moves = sorted(record.moves, key=lambda m: m.number)
                assert [m.number for m in moves] == list(range(1, len(moves) + 1))
                assert record.state == game.serialise(replay(record))  # the log rebuilds the board
                if record.board in played_boards:
                    # each move once, in order, though every third was sent twice
                    assert [(m.kind, m.move) for m in moves] == [("move", move) for move in sent[record.board]]
                    assert record.status == "active"
                else:
                    assert [m.kind for m in moves] == ["forfeit"]
                    assert record.status == "finished"

            outbound = list(session.scalars(select(Outbound)))
            nags = [row for row in outbound if b"\nSubject: Nag: " in row.raw]
        assert len(nags) == IDLE  # each idle board's reminder, once
        assert {row.status for row in outbound} == {"sent"}
        assert [row.attempts for row in outbound] == [1] * len(outbound)  # no reply delivered by two senders
        files = sorted(path.name for path in (outbox(tmp_path) / "new").iterdir())
        assert files == sorted(maildir_name(row.message_id) for row in outbound)  # each reply once
        assert cluster.servers[1].proc.returncode == -9
        for number in (0, 2):
            assert cluster.servers[number].proc.poll() is None, cluster.stderr()
    finally:
        if cluster is not None:
            cluster.close()
        if sessions is not None:
            sessions.kw["bind"].dispose()
        databases.drop_all()

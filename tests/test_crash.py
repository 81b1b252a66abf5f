"""Crash safety of `pbmserv serve`: SIGKILL at random moments of a whole game.

A real `python -m pbmserv serve` process takes a whole game's mails, one SMTP connection
a mail, and is killed with SIGKILL at a few seeded moments: between two mails, right
after a 250 (the worker is busy with that mail), while its replies are being written,
and while a DATA is in flight. Each time it is restarted on the same database and every
mail that got no 250 is sent again, as a real MTA would. At the end every mail was
applied exactly once and in order, the game is over, and every reply was delivered:
exactly once into the Maildir; at least once through an SMTP relay, where a second
copy can only be the same reply (same Message-ID), resent because the server died
between the relay's 250 and marking the reply sent.

Every wait is bounded; every process started here is killed in a teardown.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import email.utils
import os
import random
import re
import smtplib
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from email.message import EmailMessage
from pathlib import Path

import pytest

from mailgen import game_mails
from test_serve_process import (HOST, SERVER_ADDRESS, ServeProcess, base_env, db_path, free_port, outbox, spooled,
                                wait_for)
from test_smtp import Relay
from conftest import plain

SETTLE_SECONDS = 20.0  # for the server to answer everything it holds
SEND_ATTEMPTS = 6  # tries for one mail across restarts (a real MTA retries too)
KILLS = 4


# --- the mails and what they must cause -------------------------------------------------

MOVE = re.compile(r"^(\w+) move 101 (\w+) \S+ (.+) #(\d+)$", re.MULTILINE)


class GameMail:
    def __init__(self, message: EmailMessage):
        self.message_id = message["Message-ID"]
        self.sender = email.utils.parseaddr(str(message["From"]))[1]
        self.subject = str(message["Subject"])
        self.raw = message.as_bytes(policy=email.policy.SMTP)
        found = MOVE.search(self.subject) or MOVE.search(plain(message))
        self.move = (int(found[4]), found[3]) if found else None  # (number, move)

    def expected_recipients(self, players: tuple[str, ...]) -> set[str]:
        """The To of each reply: a sign-up and a `show` answer the sender; a challenge
        and a move go to both players."""
        if self.subject.startswith("signup") or " show " in self.subject:
            return {self.sender}
        return {f"{player}@example.org" for player in players}


def load_game(game: str, seed: int, params: str = "") -> list[GameMail]:
    return [GameMail(message) for message in game_mails(game, seed=seed, params=params)]


# --- the server, killed and restarted ---------------------------------------------------

class Crashing:
    """`pbmserv serve` on one database and port, SIGKILLed and restarted at will; every
    process it started is killed by `close()`."""

    def __init__(self, tmp: Path, env: dict[str, str], port: int):
        self.tmp, self.env, self.port = tmp, env, port
        self.runs: list[ServeProcess] = []
        self.lock = threading.Lock()
        self.kills = 0

    @property
    def current(self) -> ServeProcess:
        return self.runs[-1]

    def start(self) -> None:
        """Start a run and wait until it listens; a run the relay kills before that
        (its first pass delivers what the last run left queued) is started again."""
        for _attempt in range(5):
            with self.lock:
                run = ServeProcess(self.tmp, self.env, f"run{len(self.runs)}")
                self.runs.append(run)
            try:
                run.wait_listening(self.port)
                return
            except AssertionError:
                if run.proc.poll() != -9:
                    raise
        raise AssertionError(f"serve was killed before it listened, five times: {self.stderr()}")

    def kill(self) -> bool:
        """SIGKILL the running server (from any thread); False if it was not running."""
        with self.lock:
            proc = self.current.proc
            if proc.poll() is not None:
                return False
            proc.kill()
            proc.wait(10)
            self.kills += 1
            return True

    def kill_running(self) -> None:
        """SIGKILL the server; if something else (the relay) just killed it, restart it
        and kill that run: its recovery pass is one more random moment."""
        if not self.kill():
            self.ensure_running()
            assert self.kill(), "the restarted server died by itself"

    def alive(self) -> bool:
        return self.current.proc.poll() is None

    def ensure_running(self) -> None:
        if not self.alive():
            code = self.current.proc.returncode
            assert code == -9, f"serve died by itself (exit {code}): {self.current.stderr[-3000:]}"
            self.start()

    def close(self) -> None:
        for run in self.runs:
            run.close()

    def stderr(self) -> str:
        return "\n".join(f"--- {run.err_path.name}\n{run.stderr[-1500:]}" for run in self.runs)


@pytest.fixture
def crashing(tmp_path):
    servers: list[Crashing] = []

    def make(env: dict[str, str], port: int) -> Crashing:
        server = Crashing(tmp_path, env, port)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.close()


def try_send(port: int, mail: GameMail) -> bool:
    """One mail in one connection; True once the server's 250 to DATA was seen (a
    failure of the QUIT after it does not undo that)."""
    try:
        client = smtplib.SMTP(HOST, port, timeout=10, local_hostname="localhost")
    except OSError:
        return False
    acked = False
    try:
        client.sendmail(mail.sender, [SERVER_ADDRESS], mail.raw)
        acked = True
        client.quit()
    except (smtplib.SMTPException, OSError):
        pass
    finally:
        client.close()
    return acked


# --- reading the database ---------------------------------------------------------------

def query(tmp: Path, sql: str) -> list[tuple]:
    path = db_path(tmp)
    if not path.exists():
        return []
    connection = sqlite3.connect(path, timeout=10)
    try:
        return connection.execute(sql).fetchall()
    except sqlite3.OperationalError:  # no schema yet
        return []
    finally:
        connection.close()


def settled(tmp: Path) -> bool:
    """Nothing waits to be processed or delivered."""
    return not spooled(tmp) and not query(tmp, "SELECT 1 FROM inbound WHERE status = 'queued' "
                          "UNION ALL SELECT 1 FROM outbound WHERE status = 'queued'")


def maildir_count(tmp: Path) -> int:
    try:
        return len(os.listdir(outbox(tmp) / "new"))
    except FileNotFoundError:
        return 0


# --- the game, with kills -----------------------------------------------------------------

MODES = ("between", "after_ack", "sending", "in_data")


def plan_kills(rng: random.Random, count: int, modes: tuple[str, ...], kills: int = KILLS) -> dict[int, str]:
    """Mail index -> how the server is killed around it; every mode once before any twice."""
    indices = sorted(rng.sample(range(1, count - 1), kills))
    order = rng.sample(list(modes), len(modes)) + [rng.choice(modes) for _ in range(kills)]
    return dict(zip(indices, order[:kills]))


def wait_settled(server: Crashing) -> None:
    """Until nothing waits to be processed or delivered, restarting the server if
    something (the relay) killed it meanwhile."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        server.ensure_running()
        if settled(server.tmp):
            return
        time.sleep(0.02)
    raise AssertionError(f"the server did not settle within {SETTLE_SECONDS}s: {server.stderr()}")


def delivered_not_marked(tmp: Path) -> int:
    """Replies in the Maildir whose row still says queued: the next run must not write them again."""
    names = set(os.listdir(outbox(tmp) / "new")) if (outbox(tmp) / "new").is_dir() else set()
    return sum(re.sub(r"[^A-Za-z0-9._-]", "_", message_id.strip("<>")) in names
               for (message_id,) in query(tmp, "SELECT message_id FROM outbound WHERE status = 'queued'"))


def play_with_kills(server: Crashing, mails: list[GameMail], kills: dict[int, str], rng: random.Random,
                    sending_seen) -> dict[str, int]:
    """Send every mail in order, killing the server where `kills` says; a mail without
    a 250 is sent again after the restart. Returns what happened, for the report."""
    stats: Counter = Counter()
    tmp = server.tmp
    deadline = time.monotonic() + 120
    for index, mail in enumerate(mails):
        mode = kills.get(index)
        acked = False
        for _attempt in range(SEND_ATTEMPTS):
            assert time.monotonic() < deadline, "the game took too long"
            server.ensure_running()
            if mode == "in_data":
                mode = None  # the kill happens once, whatever the outcome of this attempt
                result: list[bool] = []
                sender = threading.Thread(target=lambda: result.append(try_send(server.port, mail)), daemon=True)
                sender.start()
                time.sleep(rng.uniform(0.0, 0.02))
                server.kill_running()
                sender.join(15)
                assert not sender.is_alive(), "the client hung on a killed server"
                acked = bool(result and result[0])
                stats["in_data_acked" if acked else "in_data_refused"] += 1
            else:
                before = sending_seen()
                acked = try_send(server.port, mail)
                stats["sends"] += 1
            if acked:
                break
            stats["resent"] += 1
            if server.alive():
                time.sleep(0.1)  # a real refusal (not a crash): an MTA waits before retrying
        assert acked, f"mail {index} ({mail.message_id}) never got a 250: {server.stderr()}"
        if mode == "between":
            wait_settled(server)
            server.kill_running()
        elif mode == "after_ack":
            time.sleep(rng.choice([0.0, rng.uniform(0.0, 0.03)]))
            server.kill_running()
        elif mode == "sending":
            # Kill as soon as the first reply to this mail is out: the next one may be
            # half written, or this one not yet marked sent.
            wait_for(lambda: sending_seen() > before, 5, 0.0005)
            server.kill_running()
            stats["delivered_not_marked"] += delivered_not_marked(tmp)
        if mode:
            stats[mode] += 1
    wait_settled(server)
    code, _took = server.current.terminate()
    assert code == 0, f"the last run did not stop cleanly on SIGTERM: {server.current.stderr[-3000:]}"
    print(f"crash stats: {dict(stats)}")
    return dict(stats)


def check_applied_once_in_order(tmp: Path, mails: list[GameMail]) -> None:
    """Each mail stored once and done; the move log is the game's moves, in order, each
    from the mail that carried it; the game is over."""
    inbound = query(tmp, "SELECT id, message_id, status, error FROM inbound ORDER BY id")
    assert [row[1] for row in inbound] == [mail.message_id for mail in mails], "a mail lost, doubled or reordered"
    assert [row for row in inbound if row[2] != "done"] == [], "a mail was not processed"
    message_of = {row[0]: row[1] for row in inbound}
    moves = query(tmp, "SELECT m.number, m.kind, m.move, m.inbound_id FROM moves m "
                       "JOIN games g ON g.id = m.game_id WHERE g.board = 101 ORDER BY m.number")
    expected = [(mail.move[0], "move", mail.move[1], mail.message_id) for mail in mails if mail.move]
    assert [(n, kind, move, message_of.get(inbound_id)) for n, kind, move, inbound_id in moves] == expected
    assert query(tmp, "SELECT status FROM games WHERE board = 101") == [("finished",)]


def expected_replies(mails: list[GameMail], players: tuple[str, ...]) -> set[tuple[str, str]]:
    return {(mail.message_id, to) for mail in mails for to in mail.expected_recipients(players)}


def parse(raw: bytes) -> EmailMessage:
    return email.message_from_bytes(raw, policy=email.policy.default)


# --- 1. into the Maildir: exactly once ---------------------------------------------------

@pytest.mark.parametrize("seed", [6, 7, 13])
def test_sigkill_at_random_moments_loses_nothing_and_answers_each_mail_once(tmp_path, crashing, seed):
    rng = random.Random(f"crash-maildir-{seed}")
    mails = load_game("wari", seed)
    players = ("alice", "bob")
    port = free_port()
    server = crashing(base_env(tmp_path, port), port)
    server.start()
    kills = plan_kills(rng, len(mails), MODES)

    stats = play_with_kills(server, mails, kills, rng, lambda: maildir_count(tmp_path))

    assert server.kills == KILLS, (server.kills, stats)
    check_applied_once_in_order(tmp_path, mails)

    outbound = query(tmp_path, "SELECT message_id, status, raw FROM outbound ORDER BY id")
    assert [row for row in outbound if row[1] != "sent"] == []
    files = {path.name: path.read_bytes() for path in (outbox(tmp_path) / "new").iterdir()}
    # one whole file a reply, named after its Message-ID, never cut short by a kill
    assert len(files) == len(outbound), "a reply file is missing or extra"
    for message_id, _status, raw in outbound:
        name = re.sub(r"[^A-Za-z0-9._-]", "_", message_id.strip("<>"))
        file = files.get(name, b"")  # the envelope sender's Return-Path line, then the reply
        assert file.startswith(b"Return-Path: <pbmserv+b-") and file.partition(b"\n")[2] == raw, \
            f"reply {message_id} is missing or not whole in the Maildir"
    replies = [parse(raw) for raw in files.values()]
    per_key = Counter((reply["In-Reply-To"], str(reply["To"])) for reply in replies)
    assert {key: count for key, count in per_key.items() if count != 1} == {}, "a reply delivered twice"
    assert set(per_key) == expected_replies(mails, players), "a reply is missing or unexpected"
    assert not [str(r["Subject"]) for r in replies if "rror" in str(r["Subject"])], "an error reply: a move was refused"


# --- 2. through an SMTP relay: at least once, duplicates recognisable ----------------------

class KillingRelay(Relay):
    """The relay: records each reply, answers 250, and for the chosen replies has the
    server SIGKILLed right after that 250 went out, before it can mark the reply sent."""

    def __init__(self, kill_after: set[int], kill) -> None:
        self.kill_after = kill_after
        self.kill = kill
        self.fired = 0  # kills asked for
        self.relay_kills = 0  # of which found the server running
        super().__init__()

    async def handle_DATA(self, server, session, envelope):
        answer = await super().handle_DATA(server, session, envelope)
        if len(self.received) in self.kill_after:
            self.kill_after.discard(len(self.received))
            self.fired += 1
            # call_soon: runs once this hook has returned and the 250 was written
            asyncio.get_running_loop().call_soon(self._kill)
        return answer

    def _kill(self) -> None:
        threading.Thread(target=self._kill_now, daemon=True).start()

    def _kill_now(self) -> None:
        if self.kill():
            self.relay_kills += 1


@pytest.mark.parametrize("seed", [1, 6])
def test_sigkill_with_the_smtp_relay_delivers_every_reply_at_least_once(tmp_path, crashing, seed):
    rng = random.Random(f"crash-relay-{seed}")
    mails = load_game("superwari", seed, params="-pits=4 -stones=2")
    players = ("alice", "bob")
    port = free_port()
    holder: list[Crashing] = []
    expected = expected_replies(mails, players)
    # two kills by the relay (after its 250 to the server), two by the client
    relay = KillingRelay(set(rng.sample(range(2, len(expected) - 2), 2)), lambda: holder[0].kill())
    try:
        env = base_env(tmp_path, port, PBMSERV_OUTBOUND_TRANSPORT="smtp",
                       PBMSERV_OUTBOUND_RELAY_HOST=HOST, PBMSERV_OUTBOUND_RELAY_PORT=str(relay.port))
        server = crashing(env, port)
        holder.append(server)
        server.start()
        kills = plan_kills(rng, len(mails), ("between", "after_ack", "in_data"), kills=2)  # the relay does two
        stats = play_with_kills(server, mails, kills, rng, lambda: len(relay.received))
    finally:
        relay.controller.stop()

    stats["relay_kills"] = relay.relay_kills
    assert relay.fired == 2 and relay.relay_kills >= 1, stats
    assert server.kills == 2 + relay.relay_kills, stats
    check_applied_once_in_order(tmp_path, mails)
    outbound = {row[0]: row[1:] for row in query(tmp_path, "SELECT message_id, status, raw FROM outbound")}
    assert {status for status, _raw in outbound.values()} == {"sent"}
    assert not (outbox(tmp_path) / "new").exists() or maildir_count(tmp_path) == 0

    copies: dict[str, list[bytes]] = defaultdict(list)
    ids_per_key: dict[tuple[str, str], set[str]] = defaultdict(set)
    for mail_from, recipients, wire in relay.received:
        reply = parse(wire)
        message_id = reply["Message-ID"]
        assert re.fullmatch(r"pbmserv\+b-\d+-[a-z2-7]{20}@localhost", mail_from)  # the reply's own VERP sender
        assert recipients == [str(reply["To"])]
        copies[message_id].append(wire)
        ids_per_key[(reply["In-Reply-To"], str(reply["To"]))].add(message_id)
    # none missing, none unexpected
    assert set(copies) == set(outbound), "a queued reply never reached the relay, or an unknown one did"
    assert set(ids_per_key) == expected, "a reply is missing or unexpected"
    # a second copy is the same reply, recognisable by its Message-ID and identical
    assert {key: ids for key, ids in ids_per_key.items() if len(ids) != 1} == {}, \
        "two different replies for one (In-Reply-To, To): a duplicate the receiver cannot recognise"
    for message_id, wires in copies.items():
        assert all(wire == wires[0] for wire in wires), f"copies of {message_id} differ"
    duplicates = sum(len(wires) - 1 for wires in copies.values())
    print(f"relay: {len(relay.received)} received, {duplicates} duplicates, {stats}")
    # only a death between the relay's 250 and marking the reply sent resends it: at
    # most one reply per kill
    assert duplicates <= server.kills, (duplicates, stats)


# --- 3. a kill while the schema is being created or upgraded ------------------------------

# Runs the migrations up to `target`, SIGKILLing itself as the statement starting with
# `marker` begins (no marker: runs to the end).
MIGRATE_AND_DIE = """
import os, signal, sys
from alembic import command
from sqlalchemy import event
from pbmserv.store import db
url, target, marker = sys.argv[1:4]
engine = db.make_engine(url)

@event.listens_for(engine, "connect")
def die_at_marker(dbapi_connection, _record):
    def trace(sql):
        if marker and " ".join(sql.split()).upper().startswith(marker.upper()):
            os.kill(os.getpid(), signal.SIGKILL)
    dbapi_connection.set_trace_callback(trace)

command.upgrade(db.alembic_config(engine), target)
"""


class DatabaseNotReopened(AssertionError):
    """The server cannot start on a database a killed migration left behind."""


@pytest.mark.parametrize("start_from, marker", [
    (None, "CREATE TABLE inbound"),  # the first start on a new database
    ("0001", "ALTER TABLE games ADD COLUMN due_at"),  # an upgrade, half done
], ids=["new-database", "upgrade"])
def test_sigkill_during_migrations_leaves_a_database_that_still_opens(tmp_path, crashing, start_from, marker):
    port = free_port()
    env = base_env(tmp_path, port)
    url = env["PBMSERV_DATABASE_URL"]
    db_path(tmp_path).parent.mkdir(parents=True, exist_ok=True)
    if start_from is not None:
        done = subprocess.run([sys.executable, "-c", MIGRATE_AND_DIE, url, start_from, ""], env=env,
                              cwd=tmp_path, capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr.decode()
    done = subprocess.run([sys.executable, "-c", MIGRATE_AND_DIE, url, "head", marker], env=env,
                          cwd=tmp_path, capture_output=True, timeout=60)
    assert done.returncode == -9, f"the migration was not killed at {marker!r}: {done.stderr.decode()}"

    server = crashing(env, port)
    try:
        server.start()
    except AssertionError as error:
        raise DatabaseNotReopened(str(error)) from None
    mail = load_game("wari", 7)[0]
    assert try_send(port, mail)
    assert wait_for(lambda: maildir_count(tmp_path) == 1 and settled(tmp_path), SETTLE_SECONDS), server.stderr()
    assert query(tmp_path, "SELECT message_id, status FROM inbound") == [(mail.message_id, "done")]

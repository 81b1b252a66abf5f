"""Whole games over real SMTP: smtplib → the aiosmtpd listener of `serve` → worker →
replies in the Maildir or, through the SMTP relay transport, at a second aiosmtpd
server acting as the relay."""

from __future__ import annotations

import asyncio
import mailbox
import re
import smtplib
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import pytest
from aiosmtpd.controller import Controller
from hypothesis import given, settings, strategies as st
from sqlalchemy import select

from conftest import maildir_messages, plain
from mailgen import game_mails
from pbmserv.config import load_config
from pbmserv.mail.outbound import SmtpTransport, deliver_queued
from pbmserv.server import Server
from pbmserv.store.db import open_database
from pbmserv.store.models import Inbound, Outbound

SERVER = "pbmserv@localhost"


class RunningServer:
    """`pbmserv serve` in a thread of this process, on a free port."""

    def __init__(self, tmp_path, roles=None, url=None, **overrides):
        self.roles = roles
        sections = {"database": {"url": url or f"sqlite:///{tmp_path / 'serve.db'}"},
                    "security": {"password_cost": "fast", "trust_from": True}, "server": {"seed": "test"},
                    "smtp": {"port": 0, "max_message_size": 20000},
                    "outbound": {"transport": "maildir", "maildir": str(tmp_path / "outbox")}}
        for section, keys in overrides.items():
            sections[section].update(keys)
        self.config = load_config(environ={}).with_overrides(**sections)
        self.sessions = open_database(self.config.database.url)
        self.maildir = tmp_path / "outbox"
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        assert ready.wait(10)

    def _run(self, ready: threading.Event) -> None:
        async def main():
            self.server = Server(self.config, self.sessions, **({"roles": self.roles} if self.roles else {}))
            self.loop = asyncio.get_running_loop()
            started = asyncio.Event()
            task = asyncio.create_task(self.server.run(started, install_signals=False))
            await started.wait()
            ready.set()
            await task
        asyncio.run(main())

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.server.stop)
        self.thread.join(10)
        assert not self.thread.is_alive()

    def queued(self, timeout: float = 10) -> None:
        """Wait until the spool has moved every accepted mail into the inbound queue."""
        deadline = time.monotonic() + timeout
        while self.server.spool is not None and self.server.spool.waiting() and time.monotonic() < deadline:
            time.sleep(0.02)

    def client(self) -> smtplib.SMTP:
        return smtplib.SMTP("127.0.0.1", self.server.port, local_hostname="localhost", timeout=10)

    def send(self, message) -> None:
        with self.client() as client:
            client.send_message(message, to_addrs=[SERVER])

    def replies(self, count: int, timeout: float = 20) -> list[mailbox.MaildirMessage]:
        """Wait until at least `count` replies are in the Maildir; all of them, in order."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = read_maildir(self.maildir)
            if len(found) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"only {len(read_maildir(self.maildir))} of {count} replies arrived")


read_maildir = maildir_messages


@pytest.fixture
def running(tmp_path, serve_url):
    server = RunningServer(tmp_path, url=serve_url)
    yield server
    server.stop()


@pytest.mark.parametrize("game, title", [("wari", "Wari"), ("survival", "Survival")])
def test_a_whole_game_over_smtp_into_the_maildir(running, game, title):
    mails = game_mails(game, seed=7)
    for message in mails:
        running.send(message)
    # every mail is answered: a sign-up or show once, a challenge or move once per player
    expected = sum(1 if m["Subject"].startswith(("signup", f"{game} show")) else 2 for m in mails)
    replies = running.replies(expected)
    assert len(replies) == expected
    assert not [r["Subject"] for r in replies if "rror" in r["Subject"]]
    final = plain(replies[-1])
    assert replies[-1]["Subject"] == f"{title} Board 101" and replies[-1]["To"] == "alice@example.org"
    assert re.search(r"^(Game won by (alice|bob)\.|Game was a tie\.)$", final, re.MULTILINE)
    assert replies[-1]["In-Reply-To"] == mails[-1]["Message-ID"]


def test_a_duplicate_sent_twice_over_smtp_is_played_once(running):
    first, second, challenge, move = game_mails("superwari", seed=1)[:4]
    for message in (first, second, challenge, move, move, challenge):
        running.send(message)
    running.replies(6)
    time.sleep(0.3)  # nothing more may come
    assert [r["Subject"] for r in read_maildir(running.maildir)] == [  # the challenge says "Good luck!"
        "pbmserv signup", "pbmserv signup", "New Super-Wari Board 101 alice **", "New Super-Wari Board 101 alice **",
        "Super-Wari Board 101 bob", "Super-Wari Board 101 bob"]
    with running.sessions() as session:
        assert session.scalars(select(Inbound.status)).all() == ["done"] * 4


def test_recipients_sizes_and_status_codes(running):
    with running.client() as client:
        assert client.ehlo()[0] == 250
        assert client.mail("player@example.org") == (250, b"OK")
        assert client.rcpt("someone@localhost")[0] == 550
        assert client.rcpt("pbmserv@elsewhere.example")[0] == 550
        assert client.rcpt("pbmserv+board101@localhost") == (250, b"OK")
        assert client.rcpt("PBMSERV@LocalHost") == (250, b"OK")
        code, text = client.data(b"From: player@example.org\r\nSubject: list\r\nMessage-ID: <one@x>\r\n\r\n\r\n")
        assert (code, text) == (250, b"2.0.0 Stored")
        client.mail("player@example.org")
        client.rcpt(SERVER)
        assert client.data(b"From: player@example.org\r\nSubject: list\r\nMessage-ID: <one@x>\r\n\r\n\r\n") == (
            250, b"2.0.0 Already stored")
        client.mail("player@example.org")
        client.rcpt(SERVER)
        code, text = client.data(b"Subject: big\r\n\r\n" + (b"x" * 70 + b"\r\n") * 400)
        assert code == 552
    assert [r["Subject"] for r in running.replies(1)] == ["pbmserv list"]


def test_nothing_but_a_new_mail_wakes_the_worker_at_once(tmp_path, monkeypatch, serve_url):
    """The worker notices mail at once, not at its next poll: with the poll a minute
    away, the reply still comes back within seconds."""
    import pbmserv.server
    monkeypatch.setattr(pbmserv.server, "POLL_SECONDS", 60.0)
    monkeypatch.setattr(pbmserv.server, "RETRY_SECONDS", 60.0)
    running = RunningServer(tmp_path, url=serve_url)
    try:
        time.sleep(0.5)  # the first passes of the loops, at start-up, are over
        running.send(game_mails()[0])
        assert [r["Subject"] for r in running.replies(1, timeout=10)] == ["pbmserv signup"]
    finally:
        running.stop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Relay:
    """A second aiosmtpd server standing in for the outbound relay."""

    def __init__(self, answers: list[str] | None = None, **smtp):
        """`smtp`: options of aiosmtpd's SMTP, such as `enable_SMTPUTF8=True`."""
        self.received: list[tuple[str, list[str], bytes]] = []
        self.mail_options: list[list[str]] = []  # MAIL FROM's options, a list per mail received
        self.answers = list(answers or [])
        self.port = free_port()
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port, server_hostname="relay.test",
                                     **smtp)
        self.controller.start()

    async def handle_DATA(self, server, session, envelope):
        if self.answers:
            return self.answers.pop(0)
        self.received.append((envelope.mail_from, envelope.rcpt_tos, envelope.original_content))
        self.mail_options.append(envelope.mail_options)
        return "250 OK"


def test_a_whole_game_with_replies_through_the_smtp_relay(tmp_path, serve_url):
    relay = Relay()
    running = RunningServer(tmp_path, url=serve_url, outbound={"transport": "smtp", "relay_host": "127.0.0.1",
                                                 "relay_port": relay.port})
    try:
        mails = game_mails("superwari", seed=2, params="-pits=4 -stones=2")
        for message in mails:
            running.send(message)
        expected = sum(1 if m["Subject"].startswith(("signup", "superwari show")) else 2 for m in mails)
        deadline = time.monotonic() + 20
        while len(relay.received) < expected and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        running.stop()
        relay.controller.stop()
    assert len(relay.received) == expected
    sender, recipients, last = relay.received[-1]
    assert re.fullmatch(r"pbmserv\+b-\d+-[a-z2-7]{20}@localhost", sender) and recipients == ["alice@example.org"]
    assert re.search(rb"^(Game won by (alice|bob)\.|Game was a tie\.)\r?$", last, re.MULTILINE)
    assert not (tmp_path / "outbox").exists()


def test_relay_failures_are_retried_with_backoff_or_recorded(tmp_path):
    relay = Relay(answers=["451 4.3.0 try later", "550 5.1.1 no such user"])
    sessions = open_database(f"sqlite:///{tmp_path / 'relay.db'}")
    now = datetime(2026, 11, 1, 12, 0)
    with sessions.begin() as session:
        for number in (1, 2):
            session.add(Outbound(message_id=f"<r{number}@localhost>", recipients=[f"p{number}@example.org"],
                                 raw=f"Subject: {number}\r\n\r\nhi\r\n".encode(), status="queued",
                                 attempts=0, error="", created_at=now))
    transport = SmtpTransport("127.0.0.1", relay.port, SERVER)
    try:
        assert deliver_queued(sessions, transport, now) == 0  # 451 for the first, 550 for the second
        with sessions() as session:
            first, second = session.scalars(select(Outbound).order_by(Outbound.id)).all()
            assert (first.status, first.attempts, first.next_attempt_at) == ("queued", 1, now + timedelta(minutes=1))
            assert "451" in first.error
            assert (second.status, second.attempts) == ("failed", 1) and "550" in second.error
        assert deliver_queued(sessions, transport, now + timedelta(seconds=30)) == 0  # not due yet
        assert deliver_queued(sessions, transport, now + timedelta(minutes=1)) == 1
        assert [(r[1], r[2].split(b"\r\n")[0]) for r in relay.received] == [(["p1@example.org"], b"Subject: 1")]
        relay.controller.stop()  # the relay is down: a connection error is temporary too
        with sessions.begin() as session:
            session.add(Outbound(message_id="<r3@localhost>", recipients=["p3@example.org"], raw=b"Subject: 3\r\n\r\n",
                                 status="queued", attempts=0, error="", created_at=now))
        assert deliver_queued(sessions, transport, now + timedelta(days=1)) == 0
        assert deliver_queued(sessions, transport, now + timedelta(days=6)) == 0  # past five days: dropped
        with sessions() as session:
            third = session.scalars(select(Outbound).where(Outbound.message_id == "<r3@localhost>")).one()
            assert (third.status, third.attempts) == ("failed", 2) and "Connection" in third.error
    finally:
        if relay.controller.server is not None:
            relay.controller.stop()


# --- the listener's reading of MAIL FROM and RCPT TO ------------------------------------

def listener_pair():
    """Our listener's SMTP protocol object and the library's own, on one handler; made
    in a thread of its own, whose event loop is its own (a browser test before this
    one, in the same process, may leave the main thread's loop running)."""
    from aiosmtpd.smtp import SMTP as LibrarySMTP

    from pbmserv.mail.smtp import InboundHandler, smtp_factory

    async def make():
        handler = InboundHandler(keep=None, address=SERVER)
        return smtp_factory(handler, "localhost", 20000)(), LibrarySMTP(handler, hostname="localhost")

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


LISTENERS = listener_pair()
PATH_TEXT = st.text(alphabet="ab.-+_@<>() \t\"[]\\,:;%!é\x0b", max_size=24)


@settings(max_examples=3000, deadline=None)
@given(arg=st.one_of(PATH_TEXT, st.builds(lambda a, b: f"<{a}>{b}", PATH_TEXT, PATH_TEXT)))
def test_the_listener_reads_an_address_exactly_as_aiosmtpd_does(arg):
    """`plain_path` takes the common shape without the library's parser: whatever the
    argument, the address and parameters it gives are the library's own, and where
    the email package's parser breaks (`IndexError` on a lone `"`, `AttributeError`
    on `.@[`), it is a malformed address (553), not a failure to retry (451)."""
    ours, library = LISTENERS
    try:
        expected = library._getaddr(arg)
    except Exception:  # noqa: BLE001
        expected = (None, None)
    assert ours._getaddr(arg) == expected


@pytest.mark.parametrize("arg, expected", [
    ("<alice@example.org>", ("alice@example.org", "")),
    ("<alice@example.org> SIZE=1200 BODY=8BITMIME", ("alice@example.org", "SIZE=1200 BODY=8BITMIME")),
    ("<alice@example.org>\t \tSIZE=1", ("alice@example.org", "SIZE=1")),
    ("<alice@example.org> (a comment) SIZE=1", ("alice@example.org", "SIZE=1")),
    ('<"al ice"@example.org>', ('"al ice"@example.org', "")),
    ("<alice@[127.0.0.1]>", ("alice@[127.0.0.1]", "")),
    ("<alice@@example.org>", (None, None)),
    ("<>", ("<>", "")),  # the null sender, as the library gives it
])
def test_the_listener_reads_the_shapes_of_addresses(arg, expected):
    ours, library = LISTENERS
    assert ours._getaddr(arg) == library._getaddr(arg) == expected


def test_an_address_the_parser_breaks_on_is_refused_and_the_connection_goes_on(running):
    """Over a real socket: `MAIL FROM:"` broke the email package's parser inside
    aiosmtpd, and the listener answered 451 (try again later), so a sending MTA
    would have retried a path it can never send; now a 553, and the same
    connection still takes a mail."""
    with running.client() as client:
        client.ehlo()
        assert client.docmd("MAIL FROM:", '"') == (553, b"5.1.3 Error: malformed address")
        assert client.docmd("MAIL FROM:", ".@[") == (553, b"5.1.3 Error: malformed address")
        assert client.docmd("MAIL FROM:", "<player@example.org> SIZE=300") == (250, b"OK")
        assert client.docmd("RCPT TO:", '"') == (553, b"5.1.3 Error: malformed address")
        assert client.rcpt(SERVER) == (250, b"OK")
        assert client.data(b"From: player@example.org\r\nSubject: list\r\nMessage-ID: <two@x>\r\n\r\n\r\n") == (
            250, b"2.0.0 Stored")
    assert [r["Subject"] for r in running.replies(1)] == ["pbmserv list"]


def test_a_local_part_over_the_limit_is_refused_as_by_the_library():
    ours, library = listener_pair()
    ours.local_part_limit = library.local_part_limit = 5
    assert ours._getaddr("<abcdef@example.org>") == library._getaddr("<abcdef@example.org>") == (None, None)
    assert ours._getaddr("<abcde@example.org>") == ("abcde@example.org", "")

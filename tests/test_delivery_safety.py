"""Issue 16 at the edges: no single mail stops, slows or misuses delivery. One bad
reply fails alone; every reply leaves with a signed envelope sender of its own (VERP);
the SMTP edge caps recipients and the stored size; a forged Message-ID cannot make a
player's own mail vanish as a duplicate."""

from __future__ import annotations

import ctypes
import os
import re
import time
from datetime import datetime, timedelta

import pytest
from sqlalchemy import select

from conftest import make_mail
from pbmserv import keys
from pbmserv.config import load_config
from pbmserv.mail import outbound
from pbmserv.mail.outbound import (MaildirTransport, MemoryTransport, PermanentFailure, SmtpTransport,
                                   bounced_reply, deliver_queued, make_transport)
from pbmserv.store.db import open_database
from pbmserv.store.models import Inbound, Outbound
from pbmserv.store.queue import enqueue
from test_lmtp import conversation
from test_smtp import Relay, RunningServer

SERVER = "pbmserv@localhost"
NOW = datetime(2026, 11, 1, 12, 0)
VERP = re.compile(r"pbmserv\+b-(\d+)-[a-z2-7]{20}@localhost")


def queue_replies(sessions, recipients: list[str]) -> None:
    with sessions.begin() as session:
        for number, recipient in enumerate(recipients, start=1):
            session.add(Outbound(message_id=f"<r{number}@localhost>", recipients=[recipient],
                                 raw=f"Subject: {number}\r\n\r\nhi\r\n".encode(), status="queued",
                                 attempts=0, error="", created_at=NOW))


def rows(sessions) -> list[Outbound]:
    with sessions() as session:
        found = session.scalars(select(Outbound).order_by(Outbound.id)).all()
        session.expunge_all()
        return found


# --- 1. one bad reply fails alone ---------------------------------------------------------

def test_a_non_ascii_address_the_relay_cannot_take_fails_alone(tmp_path, caplog):
    relay = Relay(enable_SMTPUTF8=False)  # aiosmtpd's Controller offers it unless told not to
    sessions = open_database(f"sqlite:///{tmp_path / 'd.db'}")
    queue_replies(sessions, ["josé@e.test", "p2@example.org", "p3@example.org"])
    try:
        assert deliver_queued(sessions, SmtpTransport("127.0.0.1", relay.port, SERVER), NOW) == 2
    finally:
        relay.controller.stop()
    first, second, third = rows(sessions)
    assert (first.status, first.attempts) == ("failed", 1)
    assert first.error == "the relay does not offer SMTPUTF8, which the address josé@e.test needs"
    assert [(r.status, r.attempts) for r in (second, third)] == [("sent", 1), ("sent", 1)]
    assert [r[1] for r in relay.received] == [["p2@example.org"], ["p3@example.org"]]
    assert "josé@e.test" in caplog.text and "SMTPUTF8" in caplog.text


def test_a_non_ascii_address_goes_out_with_smtputf8_where_the_relay_offers_it(tmp_path):
    relay = Relay(enable_SMTPUTF8=True)
    sessions = open_database(f"sqlite:///{tmp_path / 'd.db'}")
    queue_replies(sessions, ["josé@e.test", "p2@example.org"])
    try:
        assert deliver_queued(sessions, SmtpTransport("127.0.0.1", relay.port, SERVER), NOW) == 2
    finally:
        relay.controller.stop()
    assert [r[1] for r in relay.received] == [["josé@e.test"], ["p2@example.org"]]
    assert ["SMTPUTF8" in options for options in relay.mail_options] == [True, False]  # only where needed
    with sessions() as session:
        for (sender, _recipients, raw), row_id in zip(relay.received, (1, 2)):
            assert VERP.fullmatch(sender) and VERP.fullmatch(sender)[1] == str(row_id)  # MAIL FROM is the tag
            assert bounced_reply(session, SERVER, sender).id == row_id


class Failing:
    """A transport that raises what the test names for a recipient."""

    server_address = SERVER

    def __init__(self, batch: int, failures: dict[str, Exception]):
        self.batch, self.failures, self.delivered = batch, failures, []

    def deliver(self, recipients, raw, message_id, sender=None):
        if recipients[0] in self.failures:
            raise self.failures[recipients[0]]
        self.delivered.append(recipients[0])


@pytest.mark.parametrize("batch", [1, 100])
def test_any_error_delivering_a_reply_affects_that_reply_alone(tmp_path, batch, caplog):
    sessions = open_database(f"sqlite:///{tmp_path / 'd.db'}")
    queue_replies(sessions, ["bug@x.test", "enc@x.test", "later@x.test", "refused@x.test", "fine@x.test"])
    transport = Failing(batch, {"bug@x.test": RuntimeError("a bug"),
                                "enc@x.test": UnicodeEncodeError("ascii", "é", 0, 1, "no"),
                                "later@x.test": ConnectionResetError("reset"),
                                "refused@x.test": PermanentFailure("550 no such user")})
    assert deliver_queued(sessions, transport, NOW) == 1
    assert transport.delivered == ["fine@x.test"]
    found = rows(sessions)
    assert [(r.status, r.attempts, r.next_attempt_at) for r in found] == [
        ("failed", 1, None), ("failed", 1, None), ("queued", 1, NOW + timedelta(minutes=1)),
        ("failed", 1, None), ("sent", 1, None)]
    assert [r.error for r in found] == [
        "RuntimeError: a bug", "UnicodeEncodeError: 'ascii' codec can't encode character '\\xe9' "
        "in position 0: no", "ConnectionResetError: reset", "550 no such user", ""]
    assert "a bug" in caplog.text and "bug@x.test" in caplog.text
    assert deliver_queued(sessions, transport, NOW + timedelta(minutes=1)) == 0  # only the one waiting is due
    assert [r.attempts for r in rows(sessions)] == [1, 1, 2, 1, 1]


def draft(number: int, **changes) -> dict:
    return dict(dict(sender=SERVER, subject=f"reply {number}", body="hi\n", in_reply_to=None, reply_to=None,
                     html=None), **changes)


def test_a_draft_that_cannot_be_rendered_fails_alone(tmp_path, caplog):
    """The sender renders each reply from its draft; one that cannot be (a bug: here a
    board of a game this server has no more) is failed with the error, its draft kept
    for `pbmserv queue retry` once fixed, and the others are delivered and stored as
    they were delivered."""
    sessions = open_database(f"sqlite:///{tmp_path / 'd.db'}")
    broken = draft(1, html=[["board", {"game": "nosuchgame", "view": {}, "context": {"names": []}}]])
    with sessions.begin() as session:
        for number, content in enumerate([broken, draft(2)], start=1):
            session.add(Outbound(message_id=f"<d{number}@localhost>", recipients=[f"p{number}@example.org"], raw=b"",
                                 draft=content, status="queued", attempts=0, error="", created_at=NOW))
    transport = MemoryTransport(SERVER)
    assert deliver_queued(sessions, transport, NOW) == 1
    first, second = rows(sessions)
    assert (first.status, first.attempts, first.raw, first.draft) == ("failed", 1, b"", broken)
    assert first.error.startswith("AttributeError: ")
    [(recipients, raw)] = transport.delivered
    assert recipients == ["p2@example.org"] and b"Subject: reply 2\n" in raw
    assert (second.status, second.raw, second.draft) == ("sent", raw, None)
    assert "reply <d1@localhost> to ['p1@example.org'] failed for good" in caplog.text


def test_the_worker_queues_drafts_and_the_sender_renders_them(server):
    """A board mail waits in the queue as a draft, its bytes empty: the worker's
    transaction renders no MIME; the sender's bytes are the same mail."""
    server.signup("alice", "bob")
    server.send("alice@example.org", "superwari challenge alice alice-pw bob")
    server.count += 1
    enqueue(server.sessions, make_mail("alice@example.org", "superwari move 101 alice alice-pw c", "",
                                       date=server.clock, message_id="<draft-test@example.org>"), server.clock)
    server.worker.run_pending()
    queued = [row for row in rows(server.sessions) if row.status == "queued"]
    assert len(queued) == 2 and all(row.raw == b"" and row.draft["html"] for row in queued)
    replies = server.collect(lambda: None)
    assert len(replies) == 2 and all(r.message.get_content_type() == "multipart/alternative" for r in replies)
    sent = {row.id: row for row in rows(server.sessions)}
    assert all(sent[row.id].draft is None and sent[row.id].raw.startswith(b"From: ") for row in queued)


# --- 2. bounces tied to what was sent -----------------------------------------------------

def test_every_reply_leaves_with_a_signed_envelope_sender_of_its_own(server):
    server.signup("alice", "bob")
    server.send("alice@example.org", "superwari challenge alice alice-pw bob")
    delivered, senders = server.transport.delivered, server.transport.senders
    assert len(delivered) == len(senders) == 4 and all(len(item) == 2 for item in delivered)
    with server.sessions() as session:
        for (recipients, raw), sender in zip(delivered, senders):
            assert VERP.fullmatch(sender), sender
            row = bounced_reply(session, SERVER, sender)
            assert (row.raw, row.recipients) == (raw, recipients)
    assert len(set(senders)) == 4


def test_only_a_genuine_tag_names_a_reply(server):
    server.signup("alice", "bob")
    with server.sessions() as session:
        first, second = session.scalars(select(Outbound).order_by(Outbound.id)).all()
        tag = keys.make_tag(session, "b", str(first.id))
        mac = tag.rpartition("-")[2]
        assert bounced_reply(session, SERVER, keys.tagged_address(SERVER, tag)).id == first.id
        assert bounced_reply(session, SERVER, f"<{keys.tagged_address(SERVER, tag).upper()}>").id == first.id
        for hostile in [
            f"pbmserv+b-{second.id}-{mac}@localhost",  # another reply's id with this one's MAC
            f"pbmserv+b-{first.id}-{'a' * 20}@localhost",  # a guessed MAC
            f"pbmserv+{keys.make_tag(session, 'c', str(first.id))}@localhost",  # a genuine tag of another kind
            f"pbmserv+b-{'9' * 150}-{mac}@localhost",  # an id no database column holds
            f"pbmserv+b-{first.id}-{mac}@elsewhere.test", f"other+b-{first.id}-{mac}@localhost",
            f"pbmserv+b--{mac}@localhost", "pbmserv@localhost", "", "<>", "pbmserv+@localhost", "@",
        ]:
            assert bounced_reply(session, SERVER, hostile) is None, hostile


def test_the_maildir_writes_the_envelope_sender_as_return_path_first(tmp_path):
    sessions = open_database(f"sqlite:///{tmp_path / 'd.db'}")
    queue_replies(sessions, ["p1@example.org"])
    transport = MaildirTransport(tmp_path / "box", server_address="game@example.net")
    assert deliver_queued(sessions, transport, NOW) == 1
    [file] = (tmp_path / "box" / "new").iterdir()
    first, rest = file.read_bytes().split(b"\r\n", 1)
    assert re.fullmatch(rb"Return-Path: <game\+b-1-[a-z2-7]{20}@example\.net>", first)
    assert rest == b"Subject: 1\r\n\r\nhi\r\n"
    with sessions() as session:  # the tag is the one bounced_reply knows
        sender = first.decode().partition("<")[2].rstrip(">")
        assert bounced_reply(session, "game@example.net", sender).id == 1


def test_a_reply_whose_file_cannot_be_synced_is_neither_in_new_nor_counted(tmp_path, monkeypatch):
    """Where there is no syncfs, each file is synced alone: a reply whose sync fails
    is not linked into new/ (a reader must never see a file that may not be on
    disk), stays queued, and goes out at the next pass; the others go out now."""
    monkeypatch.setattr(outbound, "SYNCFS", None)
    sessions = open_database(f"sqlite:///{tmp_path / 'd.db'}")
    queue_replies(sessions, ["p1@example.org", "p2@example.org", "p3@example.org"])
    transport = MaildirTransport(tmp_path / "box")
    real_fsync, synced = os.fsync, []

    def failing_second(fd):
        synced.append(fd)
        if len(synced) == 2:
            raise OSError(5, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_second)
    assert deliver_queued(sessions, transport, NOW) == 2
    assert len(synced) == 4  # three files, then new/
    assert sorted(path.name for path in (tmp_path / "box" / "tmp").iterdir()) == []
    assert len(list((tmp_path / "box" / "new").iterdir())) == 2
    assert [row.status for row in rows(sessions)] == ["sent", "queued", "sent"]
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert deliver_queued(sessions, transport, NOW + timedelta(hours=1)) == 1
    assert len(list((tmp_path / "box" / "new").iterdir())) == 3


needs_syncfs = pytest.mark.skipif(outbound.SYNCFS is None, reason="no syncfs(2) here (Linux only)")


@needs_syncfs
def test_a_batch_of_replies_is_synced_with_two_syncfs_and_no_fsync(tmp_path, monkeypatch):
    """One syncfs puts a batch's files on disk before any is linked into new/, and
    one more its links: two disk flushes for the batch, not one a file."""
    sessions = open_database(f"sqlite:///{tmp_path / 'd.db'}")
    queue_replies(sessions, ["p1@example.org", "p2@example.org", "p3@example.org"])
    transport = MaildirTransport(tmp_path / "box")
    calls = []

    def syncfs(fd):
        calls.append(sorted(os.listdir(tmp_path / "box" / "new")))
        return real_syncfs(fd)

    real_syncfs = outbound.SYNCFS
    monkeypatch.setattr(outbound, "SYNCFS", syncfs)
    monkeypatch.setattr(os, "fsync", lambda fd: pytest.fail("an fsync where syncfs does"))
    assert deliver_queued(sessions, transport, NOW) == 3
    assert len(calls) == 2 and calls[0] == [] and len(calls[1]) == 3  # the files first, then the links
    assert [row.status for row in rows(sessions)] == ["sent", "sent", "sent"]


@needs_syncfs
def test_a_batch_whose_syncfs_fails_stays_queued_and_nothing_is_in_new(tmp_path, monkeypatch):
    """A failed syncfs may have left any of the batch's files off the disk: none is
    linked into new/, none counts as delivered, all go out at the next pass."""
    sessions = open_database(f"sqlite:///{tmp_path / 'd.db'}")
    queue_replies(sessions, ["p1@example.org", "p2@example.org"])
    transport = MaildirTransport(tmp_path / "box")
    real_syncfs = outbound.SYNCFS

    def failing(fd):
        ctypes.set_errno(5)
        return -1

    monkeypatch.setattr(outbound, "SYNCFS", failing)
    assert deliver_queued(sessions, transport, NOW) == 0
    assert list((tmp_path / "box" / "tmp").iterdir()) == []
    assert list((tmp_path / "box" / "new").iterdir()) == []
    assert [(row.status, row.error) for row in rows(sessions)] == [("queued", "OSError: [Errno 5] Input/output error")] * 2
    monkeypatch.setattr(outbound, "SYNCFS", real_syncfs)
    assert deliver_queued(sessions, transport, NOW + timedelta(hours=1)) == 2
    assert len(list((tmp_path / "box" / "new").iterdir())) == 2


def test_every_transport_knows_the_server_address(tmp_path):
    config = load_config(environ={}).with_overrides(server={"address": "game@example.net"},
                                                    outbound={"maildir": str(tmp_path / "box")})
    for kind in ("memory", "maildir", "smtp"):
        chosen = config.with_overrides(outbound={"transport": kind})
        assert make_transport(chosen).server_address == "game@example.net"
    assert make_transport(config, maildir=tmp_path / "other").server_address == "game@example.net"
    assert MemoryTransport().server_address == SERVER


# --- 3. the SMTP edge: recipients and size ----------------------------------------------

@pytest.fixture
def running(tmp_path):
    server = RunningServer(tmp_path)  # [smtp] max_message_size = 20000
    yield server
    server.stop()


def stored(running) -> list[bytes]:
    running.queued()
    with running.sessions() as session:
        return session.scalars(select(Inbound.raw).order_by(Inbound.id)).all()


def test_at_most_max_recipients_a_transaction(running):
    with running.client() as client:
        client.ehlo()
        client.mail("p@example.org")
        answers = [client.rcpt(f"pbmserv+{n}@localhost") for n in range(130)]
        assert answers[:100] == [(250, b"OK")] * 100
        assert answers[100:] == [(452, b"4.5.3 Too many recipients")] * 30
        assert client.data(b"From: p@example.org\r\nMessage-ID: <a@x>\r\n\r\nhelp\r\n")[0] == 250
        client.mail("p@example.org")  # a new transaction counts afresh
        assert client.rcpt(SERVER) == (250, b"OK")
    [raw] = stored(running)
    assert raw.count(b"X-Original-To: ") == 100 and b"X-Original-To: pbmserv+99@localhost\r\n" in raw
    running.server.handler.max_recipients = 2
    with running.client() as client:
        client.ehlo()
        client.mail("p@example.org")
        assert [client.rcpt(SERVER)[0] for _ in range(3)] == [250, 250, 452]


def test_a_recipient_named_twice_is_recorded_once(running):
    with running.client() as client:
        client.ehlo()
        client.mail("p@example.org")
        for address in (SERVER, "pbmserv+x@localhost", "PBMSERV@LOCALHOST", SERVER, "pbmserv+x@localhost"):
            assert client.rcpt(address) == (250, b"OK")
        assert client.data(b"From: p@example.org\r\nMessage-ID: <b@x>\r\n\r\nhelp\r\n")[0] == 250
    [raw] = stored(running)
    assert raw.startswith(b"X-Original-To: pbmserv@localhost\r\nX-Original-To: pbmserv+x@localhost\r\n"
                          b"From: p@example.org\r\n")


def test_lmtp_answers_each_rcpt_even_a_repeated_one(tmp_path):
    running = RunningServer(tmp_path, smtp={"protocol": "lmtp"})
    try:
        replies = conversation(running.server.port, [
            ("LHLO localhost", 1), ("MAIL FROM:<a@example.org>", 1), (f"RCPT TO:<{SERVER}>", 1),
            (f"RCPT TO:<{SERVER}>", 1), ("DATA", 1),
            ("From: a@example.org\r\nMessage-ID: <c@x>\r\n\r\nhelp\r\n.", 2), ("QUIT", 1)])
        assert replies[6:8] == ["250 2.0.0 Stored"] * 2
        [raw] = stored(running)
        assert raw.count(b"X-Original-To:") == 1
    finally:
        running.stop()


def text_of_size(size: int) -> bytes:
    """Exactly `size` bytes (at least 2) of short CRLF-ended lines, as SMTP carries them."""
    lines, rest = divmod(size - 2, 70)
    return (b"y" * 68 + b"\r\n") * lines + b"y" * rest + b"\r\n"


def test_what_is_stored_never_exceeds_max_message_size(running):
    """The X-Original-To lines count: 100 long recipients cannot carry a mail past it."""
    long_tag = "t" * 200
    with running.client() as client:
        client.ehlo()
        client.mail("p@example.org")
        for n in range(100):
            assert client.rcpt(f"pbmserv+{long_tag}{n}@localhost")[0] == 250
        code, text = client.data(b"From: p@example.org\r\nMessage-ID: <d@x>\r\n\r\n" + text_of_size(1000))
        assert code == 552 and text.startswith(b"5.3.4 ")
        assert len(text) + 4 <= 78
        # just under the limit with one recipient line: taken, and no larger than the limit
        head = b"From: p@example.org\r\nMessage-ID: <e@x>\r\n\r\n"
        line = b"X-Original-To: pbmserv@localhost\r\n"
        for size, expected in ((20000 - len(line), 250), (20001 - len(line), 552)):
            client.mail("p@example.org")
            client.rcpt(SERVER)
            assert client.data(head + text_of_size(size - len(head)))[0] == expected
    [raw] = stored(running)
    assert len(raw) == 20000


# --- 4. duplicates: the sender and the Message-ID together ------------------------------

def test_a_forged_message_id_does_not_stop_the_players_move(server):
    server.signup("alice", "bob")
    server.send("alice@example.org", "superwari challenge alice alice-pw bob")
    for forged in ("<move1@example.org>", "<move1@example.org> alice@example.org",
                   "alice@example.org <move1@example.org>"):
        server.send("mallory@evil.test", "list", message_id=forged)
    replies = server.send("alice@example.org", "superwari move 101 alice alice-pw c", message_id="<move1@example.org>")
    assert [(r.subject, r.to) for r in replies] == [("Super-Wari Board 101 bob", ["alice@example.org"]),
                                                    ("Super-Wari Board 101 bob", ["bob@example.org"])]
    # re-sent by alice, in any case of her address, it is still the one mail
    assert server.send("Alice <ALICE@Example.ORG>", "superwari move 101 alice alice-pw c",
                       message_id="<move1@example.org>") == []
    assert server.send("mallory@evil.test", "list", message_id="<move1@example.org>") == []
    with server.sessions() as session:
        assert session.scalar(select(Inbound.id).where(Inbound.message_id == "<move1@example.org>")) is not None


def test_duplicate_keys_of_hostile_message_ids(server):
    def store(sender: str, message_id: str | None, body: str = "") -> tuple[int, bool]:
        return enqueue(server.sessions, make_mail(sender, "list", body, date=NOW, message_id=message_id), NOW)

    long_a, long_b = "<" + "x" * 1200 + "a@x>", "<" + "x" * 1200 + "b@x>"  # alike in their first 998
    first = store("a@example.org", long_a)
    assert first[1] and store("a@example.org", long_b)[1]
    assert store("a@example.org", long_a) == (first[0], False)
    assert store("b@example.org", long_a)[1]  # another sender's
    assert store("a@example.org", "<p q@x>")[1] and not store("a@example.org", "<p q@x>")[1]
    assert store("b@example.org", "<p q@x>")[1]
    assert store("a@example.org", None)[1] and not store("a@example.org", None)[1]  # same bytes
    assert store("a@example.org", None, "other")[1]
    with server.sessions() as session:
        assert all(len(key) <= 998 for key in session.scalars(select(Inbound.message_id)))


@pytest.mark.parametrize("headers", [
    "From: " + ", ".join(f"a{n}@example.org" for n in range(60000)),  # 45 s in the address parser
    "From: a@example.org\r\nMessage-ID: " + "a b " * 200000,  # 27 s in the Message-ID parser
    "From: " + "g:" * 200000 + "a@example.org;"])
def test_storing_a_mail_with_a_hostile_header_is_cheap(server, headers):
    raw = (headers + "\r\nSubject: list\r\n\r\nlist\r\n").encode()
    start = time.process_time()
    first = enqueue(server.sessions, raw, NOW)
    again = enqueue(server.sessions, raw, NOW)
    assert time.process_time() - start < 1.0
    assert first[1] and again == (first[0], False)

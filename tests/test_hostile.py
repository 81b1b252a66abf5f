"""Hostile and broken mail: a corpus of real-world oddities and 10,000 generated mails
go through the real worker (in-process, in-memory database). None may make the worker
fail or change any state; each is answered with an error or dropped by the loop rules."""

from __future__ import annotations

import os
import random

import pytest
from sqlalchemy import func, select

from conftest import Server
from pbmserv.store.models import GameRecord, Inbound, User

CORPUS = [
    b"",
    b"\r\n\r\n",
    b"From: \r\nSubject: help\r\n\r\n",
    b"From: <>\r\nSubject: help\r\n\r\nnull sender",
    b"Return-Path: <>\r\nFrom: MAILER-DAEMON@mx.example\r\nSubject: Undelivered Mail\r\n\r\nbounce",
    b"From: a@b.example\r\nSubject: =?utf-8?q?help_evil=0D=0ABcc:_victim@example.org?=\r\n\r\n",
    b"From: a@b.example\r\nSubject: =?x-unknown?b?AAAA?=\r\nContent-Type: text/plain; charset=x-unknown\r\n\r\n\xff\xfe",
    b"From: a@b.example\r\nSubject: \xe9t\xe9 \xff\r\n\r\n8-bit header",
    b"From: a@b.example\r\nContent-Type: multipart/mixed; boundary=\"nope\"\r\nSubject: help\r\n\r\n--other\r\n",
    b"From: a@b.example\r\nContent-Type: multipart/alternative\r\n\r\nno boundary at all",
    b"From: a@b.example\r\nContent-Transfer-Encoding: base64\r\nSubject: x\r\n\r\n!!!not base64!!!",
    b"From: a@b.example\r\nContent-Type: text/html\r\nSubject: x\r\n\r\n<p>sup<b>erwari</b> sh<script>ow 101</script></p>",
    b"From: a@b.example\r\nSubject: " + b"A" * 20000 + b"\r\n\r\nhuge header",
    b"From: a@b.example\r\nSubject: commands\r\n\r\n" + b"superwari show 999\r\n" * 3000,
    b"From: a@b.example\r\nSubject: x\r\n\r\n" + b"x" * 200000,
    b"From: a@b.example\r\nSubject: x\r\nX-Header-Without-Colon\r\n\r\nbody",
    b"From: \"Evil\r\n Name\" <a@b.example>\r\nSubject: change password a b c\r\n\r\n",
    b"From: a@b.example\r\nReply-To: <victim@example.org>\r\n <other@example.org>\r\nSubject: move\r\n\r\n",
    b"From: pbmserv+loop@localhost\r\nSubject: signup me mepass\r\n\r\nfrom myself",
    b"From: a@b.example\r\nAuto-Submitted: auto-replied\r\nSubject: signup robot robotpw\r\n\r\n",
    b"From: a@b.example\r\nPrecedence: bulk\r\nSubject: signup bulk bulkpw\r\n\r\n",
    b"From: a@b.example\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n--b\r\n",
    b"\x00\x01\x02From: a@b.example\x00\r\n\r\n\x00",
    b"From: a@b.example\r\nSubject: superwari move 101 nobody pw c#99999999999999999999999\r\n\r\n",
    b"From: a@b.example\r\nSubject: superwari show 101#99999999999999999999999999 legal\r\n\r\n",
    b"From: a@b.example\r\nSubject: superwari challenge x y z -pits=99999999999999999999\r\n\r\n",
    b"From: a@b.example\r\nSubject: serpent show " + b"9" * 500 + b"\r\n\r\n",
    b"From: a@b.example\r\nSubject: help " + "\u202e\u200b\ufeff".encode() + b"\r\n\r\n",
]

HEADER_PIECES = [b"From: a@b.example", b"From: ", b"From: <>", b"From: =?utf-8?b?w6k=?= <x@y.z>", b"Subject: help",
                 b"Subject: superwari", b"Subject: =?utf-8?q?a=0Ab?=", b"Subject: \xff\xfe", b"Content-Type: text/html",
                 b"Content-Type: multipart/mixed; boundary=q", b"Content-Transfer-Encoding: quoted-printable",
                 b"Message-ID: <dup@x>", b"Message-ID: ", b"Date: not a date", b"Date: Mon, 99 Foo 1 99:99:99",
                 b"Auto-Submitted: no", b"Reply-To: ,,,", b"Subject: change", b"Subject: message"]
BODY_PIECES = [b"", b"superwari move", b"--q", b"--q--", b"> quoted", b"-- ", b"end", b"=C3=A9=", b"<br><p>",
               b"\x80\x81", b"change colour", b"signup", b"list extra words", b"wari show 101#", b"message a b"]


def generated_mails(count: int, seed: int = 20261129):
    rng = random.Random(seed)
    for number in range(count):
        headers = [rng.choice(HEADER_PIECES) for _ in range(rng.randint(0, 6))]
        if rng.random() < 0.5:
            headers.append(b"Message-ID: <gen%d@fuzz>" % number)
        body = [rng.choice(BODY_PIECES) + bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 8)))
                for _ in range(rng.randint(0, 12))]
        newline = rng.choice([b"\r\n", b"\n"])
        yield newline.join(headers) + newline * 2 + newline.join(body)


@pytest.fixture
def quiet_server(tmp_path):
    server = Server(tmp_path, database={"url": "sqlite://"})
    server.signup("alice", "bob")
    server.send("alice@example.org", "superwari challenge alice alice-pw bob")
    return server


def snapshot(server: Server) -> tuple:
    with server.sessions() as session:
        return (session.scalar(select(func.count(User.id))),
                [(g.board, g.version, g.status) for g in session.scalars(select(GameRecord))])


def assert_all_handled(server: Server) -> None:
    with server.sessions() as session:
        statuses = dict(session.execute(select(Inbound.status, func.count()).group_by(Inbound.status)).all())
    assert set(statuses) <= {"done", "ignored"}, statuses


def test_the_corpus_of_oddities(quiet_server):
    before = snapshot(quiet_server)
    for raw in CORPUS:
        quiet_server.send_raw(raw)
    assert_all_handled(quiet_server)
    assert snapshot(quiet_server) == before
    # a newline decoded from a Subject never becomes a header of a reply
    assert not [raw for _to, raw in quiet_server.transport.delivered if b"\nBcc:" in raw or b"\nbcc:" in raw]


FUZZ_MAILS = int(os.environ.get("PBMSERV_FUZZ_MAILS", "10000"))  # the long mode: set it higher


def test_ten_thousand_generated_mails(quiet_server):
    before = snapshot(quiet_server)
    mails = list(generated_mails(FUZZ_MAILS, seed=int(os.environ.get("PBMSERV_FUZZ_SEED", "20261129"))))
    for raw in mails:
        quiet_server.send_raw(raw)
    assert_all_handled(quiet_server)
    assert snapshot(quiet_server) == before


@pytest.mark.parametrize("subject", ["wari show ²", "wari show ²#1", "abort wari ¹⁰¹ root pw",
                                     "survive move 101 alice alice-pw accept ³"])
def test_digits_that_are_not_decimal_get_an_answer(server, subject):
    """`'²'.isdigit()` holds but `int('²')` fails: numbers are read with isdecimal, so
    such a mail gets an error reply instead of failing."""
    server.signup("alice")
    replies = server.send("alice@example.org", subject)
    assert len(replies) == 1 and replies[0].subject.endswith("error")
    with server.sessions() as session:
        assert session.scalar(select(func.count()).where(Inbound.status == "failed")) == 0

"""Secrets at rest (store/retention.py): after `[limits] keep_raw_days` stored command
mail keeps no password or token, delivered replies are gone, undelivered ones keep no
token, old rate events are forgotten; nothing recent is touched and games still replay
from their move log."""

from __future__ import annotations

import base64
import json
import email.utils
import re
from datetime import timedelta
from email.message import EmailMessage

from sqlalchemy import select

from conftest import make_mail
from pbmserv.cli import main
from pbmserv.play import current_state, engine_of, replay
from pbmserv.scheduler import RETAINED, keep_alive
from pbmserv.store.models import GameRecord, Inbound, Outbound, RateEvent, Setting
from pbmserv.store.queue import enqueue
from pbmserv.store.retention import BATCH, masked_command_mail, masked_reply, retain

ALICE, BOB = "alice@example.org", "bob@example.org"
HEX16 = re.compile(rb"\b[0-9a-f]{16}\b")


def encoded_mail(server, sender: str, subject: str, body: str, cte: str) -> bytes:
    """A command mail whose body is base64 or quoted-printable: no password in it literally."""
    server.count += 1
    server.clock += timedelta(minutes=1)
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, "pbmserv@localhost", subject
    message["Date"] = email.utils.format_datetime(server.clock)
    message["Message-ID"] = f"<encoded{server.count}@example.org>"
    message.set_content(body, cte=cte)
    return message.as_bytes()


def rows(server, model) -> list:
    with server.sessions() as session:
        return list(session.scalars(select(model).order_by(model.id)))


def test_a_failed_reply_left_a_draft_loses_its_tokens_too(make_server):
    """A reply whose rendering failed keeps its draft, not bytes: retention masks the
    reply-to-play tags in the draft as in a reply's bytes."""
    server = make_server()
    server.send(ALICE, "signup alice alice-pw1")
    server.send(BOB, "signup bob bob-pw22")
    server.send(ALICE, "superwari challenge alice alice-pw1 bob")
    server.count += 1
    enqueue(server.sessions, make_mail(ALICE, "superwari move 101 alice alice-pw1 c", date=server.clock,
                                       message_id="<left-a-draft@example.org>"), server.clock)
    server.worker.run_pending()
    with server.sessions.begin() as session:
        row = next(row for row in session.scalars(select(Outbound)) if row.draft and row.draft["reply_to"])
        row.status, tagged = "failed", row.draft["reply_to"]
    server.clock += timedelta(days=server.config.limits.keep_raw_days + 1)
    assert retain(server.sessions, server.config, server.clock).scrubbed == 1
    with server.sessions() as session:
        draft = session.get(Outbound, row.id).draft
    text = json.dumps(draft)
    assert tagged.encode() not in text.encode() and "pbmserv+********@localhost" in text
    assert draft["subject"] == row.draft["subject"] and not HEX16.search(text.encode())


def test_after_keep_raw_days_no_password_or_token_is_left_and_nothing_recent_is_touched(make_server):
    server = make_server()
    server.send(ALICE, "signup alice alice-pw1")
    server.send(BOB, "signup bob bob-pw22")
    server.send(ALICE, "superwari challenge alice alice-pw1 bob")
    server.send(ALICE, "Re: whatever", "superwari move 101 alice alice-pw1 c\n")
    raw = encoded_mail(server, BOB, "my move", "Here it is:\nsuperwari move 101 bob bob-pw22 a\n", "base64")
    assert b"bob-pw22" not in raw
    server.send_raw(raw)
    server.send_raw(encoded_mail(server, ALICE, "superwari move 101 alice alice-pw1 b", "caf\u00e9 = g\u00fcnstig\n" * 3,
                                 "quoted-printable"))
    [reset] = [r for r in server.send(ALICE, "forgot alice") if r.subject == "pbmserv reset"]
    token = re.search(r"reset alice (\w+) NEWPASSWORD", reset.body).group(1)
    with server.sessions.begin() as session:  # a board mail that never went out
        board_mail = next(row for row in session.scalars(select(Outbound)) if b"pbmserv+" in row.raw)
        board_mail.status = "failed"
        reply_tag = re.search(rb"pbmserv\+[^@\s]+@", board_mail.raw).group(0)
        session.add(RateEvent(kind="test", key="old", at=server.clock))
    old_inbound = [row.id for row in rows(server, Inbound)]
    assert len(old_inbound) == 7 and len(rows(server, Outbound)) >= 8

    server.clock += timedelta(days=server.config.limits.keep_raw_days + 1)
    server.send(BOB, "superwari move 101 bob bob-pw22 h")  # recent: kept as it came
    with server.sessions.begin() as session:
        session.add(RateEvent(kind="test", key="new", at=server.clock - timedelta(days=1)))
    recent_out = [row.raw for row in rows(server, Outbound) if row.created_at == server.clock]
    assert recent_out and any(b"pbmserv+" in raw for raw in recent_out)

    old_sent = [row.id for row in rows(server, Outbound) if row.status == "sent" and row.created_at < server.clock]
    old_events = [row.id for row in rows(server, RateEvent) if row.at < server.clock - timedelta(days=2)]
    done = retain(server.sessions, server.config, server.clock)

    assert (done.masked, done.deleted, done.scrubbed, done.events) == (7, len(old_sent), 1, len(old_events)), done
    inbound = rows(server, Inbound)
    for row in inbound[:-1]:
        assert row.masked
        for secret in (b"alice-pw1", b"bob-pw22", token.encode(), base64.b64encode(b"bob-pw22")[:8]):
            assert secret not in row.raw, (row.id, row.raw)
    assert b"Subject: Re: whatever" in inbound[3].raw
    assert b"superwari move 101 alice ******** c" in inbound[3].raw
    assert b"Subject: signup bob ********" in inbound[1].raw
    assert b"superwari move 101 bob ******** a" in inbound[4].raw  # the base64 mail, written anew
    assert b"Subject: my move" in inbound[4].raw and b"From: bob@example.org" in inbound[4].raw
    assert "caf\u00e9 = g\u00fcnstig".encode() in inbound[5].raw or b"caf=C3=A9" in inbound[5].raw
    assert b"Subject: superwari move 101 alice ******** b" in inbound[5].raw
    assert not inbound[-1].masked and b"bob-pw22" in inbound[-1].raw  # recent: untouched

    outbound = rows(server, Outbound)
    assert [row.status for row in outbound if row.created_at < server.clock] == ["failed"]
    [failed] = [row for row in outbound if row.status == "failed"]
    assert reply_tag not in failed.raw and b"pbmserv+********@localhost" in failed.raw
    assert not HEX16.search(failed.raw)
    assert [row.raw for row in outbound if row.created_at == server.clock] == recent_out
    assert [event.key for event in rows(server, RateEvent) if event.kind == "test"] == ["new"]

    with server.sessions() as session:  # the game still replays from its log
        record = session.scalar(select(GameRecord))
        assert len(record.moves) == 4
        game = engine_of(record)
        assert game.serialise(replay(record)) == game.serialise(current_state(record))

    again = retain(server.sessions, server.config, server.clock)  # nothing left to do
    assert (again.masked, again.deleted, again.scrubbed, again.events) == (0, 0, 0, 0)


def test_a_mail_that_cannot_be_parsed_or_masked_is_still_handled(make_server):
    server = make_server()
    hostile = [
        b"",
        b"\xff\xfe\x00garbage without headers",
        b"Subject: =?utf-8?b?" + base64.b64encode(b"signup eve eve-secret") + b"?=\nFrom: eve@example.org\n\nhi\n",
        b"From: eve@example.org\nSubject: x\nContent-Type: multipart/alternative; boundary=\"b\"\n\n"
        b"--b\nContent-Type: text/plain\n\nsignup eve eve-secret\n--b\nContent-Type: text/html\n"
        b"Content-Transfer-Encoding: base64\n\n" + base64.b64encode(b"<p>signup eve eve-secret</p>") + b"\n--b--\n",
        b"From: eve@example.org\nSubject: signup eve eve-secret\nX-Bad: \x00\x1b\xff\n\n"
        + b"signup eve eve-secret\n" * 20000,
    ]
    for number, raw in enumerate(hostile):
        server.send_raw(raw.replace(b"From:", f"Message-ID: <h{number}@x>\nFrom:".encode(), 1))
    server.clock += timedelta(days=30)
    done = retain(server.sessions, server.config, server.clock)
    assert done.masked == len([row for row in rows(server, Inbound) if row.processed_at is not None])
    for row in rows(server, Inbound):
        assert b"eve-secret" not in row.raw and base64.b64encode(b"signup eve eve-secret") not in row.raw
        assert b"ZXZlLXNlY3JldA" not in row.raw  # base64 of the password wherever it starts


def test_masking_mail_keeps_every_other_byte_where_the_passwords_are_whole_words():
    raw = (b"From: a@example.org\r\nTo: pbmserv+m-101-0-abcdefabcdefabcdefab@localhost\r\n"
           b"Subject: superwari move 101 alice Pa55 c\r\n\r\n"
           b"Pa55 goes;\tPa55\r\n> signup zed zedpass\r\nzed\r\n")
    assert masked_command_mail(raw, "pbmserv@localhost") == (
        b"From: a@example.org\r\nTo: pbmserv+********@localhost\r\n"
        b"Subject: superwari move 101 alice ******** c\r\n\r\n"
        b"******** goes;\t********\r\n> signup zed ********\r\nzed\r\n")


def test_a_password_inside_a_longer_word_gets_the_mail_written_anew_without_it():
    raw = (b"From: a@example.org\nSubject: superwari move 101 alice pass c\nX-Note: passport\n\n"
           b"passes and bypass stay; pass goes.\n")
    masked = masked_command_mail(raw, "pbmserv@localhost")
    assert masked.startswith(b"From: a@example.org\nSubject: superwari move 101 alice ******** c\n"
                             b"X-Note: passport\nContent-Type: text/plain; charset=\"utf-8\"\n")
    assert masked.endswith(b"\n\npasses and bypass stay; ******** goes.\n")


def test_a_reply_keeps_its_text_but_not_its_tokens():
    raw = (b"Reply-To: PBMSERV+m-101-0-abcdefabcdefabcdefab@localhost\n\nconfirm alice 0123456789abcdef\n"
           b"Board 101, not 0123456789abcdef0 nor x0123456789abcdef.\n")
    assert masked_reply(raw, "pbmserv@localhost") == (
        b"Reply-To: PBMSERV+********@localhost\n\nconfirm alice ********\n"
        b"Board 101, not 0123456789abcdef0 nor x0123456789abcdef.\n")


def test_retention_works_in_batches_and_serve_runs_it_once_an_hour(make_server):
    server = make_server()
    for number in range(BATCH + 3):
        server.send_raw(f"From: x@example.org\nMessage-ID: <b{number}@x>\nSubject: x\n\nsignup x{number} pw{number}x\n"
                        .encode(), "x@example.org")
    with server.sessions.begin() as session:
        session.add_all(RateEvent(kind="t", key=str(n), at=server.clock) for n in range(BATCH + 1))
    server.clock += timedelta(days=15)
    keep_alive(server.sessions, server.config, server.clock)  # the first time: it runs
    assert all(row.masked for row in rows(server, Inbound)) and not rows(server, RateEvent)
    first = server.clock
    server.send(ALICE, "signup alice alice-pw1")
    with server.sessions.begin() as session:  # old enough at once
        session.get(Inbound, rows(server, Inbound)[-1].id).processed_at -= timedelta(days=15)
    keep_alive(server.sessions, server.config, first + timedelta(minutes=59))  # within the hour: not again
    assert not rows(server, Inbound)[-1].masked
    keep_alive(server.sessions, server.config, first + timedelta(minutes=61))
    assert rows(server, Inbound)[-1].masked
    with server.sessions() as session:
        assert session.get(Setting, RETAINED).value == (first + timedelta(minutes=61)).isoformat()


def test_tick_masks_on_every_run(tmp_path, monkeypatch, capsys):
    from conftest import Server
    server = Server(tmp_path)
    server.send(ALICE, "signup alice alice-pw1")
    with server.sessions.begin() as session:  # five minutes ago: not due by the hour
        session.merge(Setting(name=RETAINED, value=(server.clock - timedelta(minutes=5)).isoformat()))
        for row in session.scalars(select(Inbound)):
            row.processed_at -= timedelta(days=365)
    monkeypatch.setenv("PBMSERV_DATABASE_URL", server.config.database.url)
    monkeypatch.setenv("PBMSERV_OUTBOUND_TRANSPORT", "memory")
    assert main(["tick"]) == 0
    assert all(row.masked and b"alice-pw1" not in row.raw for row in rows(server, Inbound))

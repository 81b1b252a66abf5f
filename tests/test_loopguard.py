"""pbmserv.mail.loopguard: mails the server must never answer (DESIGN §3)."""

from __future__ import annotations

from email.message import EmailMessage

import pytest
from hypothesis import given, settings, strategies as st

from pbmserv.mail.loopguard import (
    header_address, header_text, loop_reason, parse_bytes, split_address,
)

SERVER = "pbmserv@games.example"


def message(extra: str = "", sender: str | None = "Alice <alice@example.com>",
            content_type: str = "text/plain") -> EmailMessage:
    lines = [f"From: {sender}"] if sender is not None else []
    lines += ["To: pbmserv@games.example", "Subject: superwari show 101",
              f"Content-Type: {content_type}"]
    lines += [line for line in extra.split("\n") if line]
    return parse_bytes(("\r\n".join(lines) + "\r\n\r\nsuperwari show 101\r\n").encode())


def test_normal_mail_passes():
    assert loop_reason(message(), SERVER) is None
    assert loop_reason(message(), SERVER, envelope_from="alice@example.com") is None


def test_auto_submitted_no_passes():
    assert loop_reason(message("Auto-Submitted: No"), SERVER) is None


def test_precedence_first_class_passes():
    assert loop_reason(message("Precedence: first-class"), SERVER) is None


def test_null_envelope_sender():
    assert loop_reason(message(), SERVER, envelope_from="") == "null sender"


def test_null_return_path():
    assert loop_reason(message("Return-Path: <>"), SERVER) == "null sender"
    assert loop_reason(message("Return-Path: < >"), SERVER) == "null sender"
    assert loop_reason(message("Return-Path: <alice@example.com>"), SERVER) is None


@pytest.mark.parametrize("sender, local", [
    ("MAILER-DAEMON@mx.example.com", "mailer-daemon"),
    ("Mail Delivery System <Mailer-Daemon@mx.example.com>", "mailer-daemon"),
    ("MAILER-DAEMON (Mail Delivery System)", "mailer-daemon"),
    ("postmaster@example.com", "postmaster"),
])
def test_daemon_sender(sender, local):
    assert loop_reason(message(sender=sender), SERVER) == f"sent by {local}"


def test_daemon_envelope_sender():
    assert loop_reason(message(), SERVER, envelope_from="MAILER-DAEMON@mx.example.com") == \
        "sent by mailer-daemon"


@pytest.mark.parametrize("value", ["auto-replied", "auto-generated", "auto-notified; owner=x"])
def test_auto_submitted(value):
    assert loop_reason(message(f"Auto-Submitted: {value}"), SERVER) == "Auto-Submitted mail"


@pytest.mark.parametrize("value", ["bulk", "LIST", "junk"])
def test_precedence(value):
    assert loop_reason(message(f"Precedence: {value}"), SERVER) == f"Precedence: {value.lower()}"


def test_list_id():
    assert loop_reason(message("List-Id: Players <players.example.com>"), SERVER) == \
        "List-Id header"


def test_list_unsubscribe():
    assert loop_reason(message("List-Unsubscribe: <mailto:leave@example.com>"), SERVER) == \
        "List-Unsubscribe header"


def test_delivery_report():
    report = message(content_type='multipart/report; report-type=delivery-status; boundary="b"')
    assert loop_reason(report, SERVER) == "delivery or disposition report"


def test_delivery_status_part_inside_a_mixed_mail():
    raw = (b"From: alice@example.com\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"
           b"--b\r\nContent-Type: text/plain\r\n\r\nfailed\r\n"
           b"--b\r\nContent-Type: message/delivery-status\r\n\r\nAction: failed\r\n\r\n--b--\r\n")
    assert loop_reason(parse_bytes(raw), SERVER) == "delivery or disposition report"


def test_disposition_report():
    report = message(content_type="message/disposition-notification")
    assert loop_reason(report, SERVER) == "delivery or disposition report"


@pytest.mark.parametrize("name", ["X-Autoreply", "X-Autorespond"])
def test_autoreply_headers(name):
    assert loop_reason(message(f"{name}: yes"), SERVER) == f"{name} header"


@pytest.mark.parametrize("sender", [
    "pbmserv@games.example", "PBM Server <PbmServ@Games.Example>", "pbmserv+101@games.example",
])
def test_own_address(sender):
    assert loop_reason(message(sender=sender), SERVER) == "mail from the server's own address"


def test_own_address_in_envelope_and_reply_to():
    assert loop_reason(message(), SERVER, envelope_from="pbmserv+x@GAMES.example") == \
        "mail from the server's own address"
    assert loop_reason(message("Reply-To: pbmserv@games.example"), SERVER) == \
        "mail from the server's own address"


def test_similar_addresses_are_not_the_server():
    assert loop_reason(message(sender="pbmserv@other.example"), SERVER) is None
    assert loop_reason(message(sender="pbmserv2@games.example"), SERVER) is None


def test_missing_from():
    assert loop_reason(message(sender=None), SERVER) == "no usable From address"


def test_unparseable_from():
    assert loop_reason(message(sender="not an address"), SERVER) == "no usable From address"


def test_header_helpers_never_raise():
    msg = parse_bytes(b"From: \xff\xfe\r\nSubject: =?bogus?q?x?=\r\n\r\n")
    assert header_address(msg, "From") == ""
    assert header_text(msg, "Subject") == "x"  # unknown charset: decoded leniently
    assert header_text(msg, "Missing") == ""


def test_split_address():
    assert split_address("Pbm+Tag+more@Games.Example") == ("pbm", "games.example")
    assert split_address("MAILER-DAEMON") == ("mailer-daemon", "")


def test_parse_bytes_never_raises_on_non_bytes():
    assert parse_bytes(None).keys() == []  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=1000))
def test_loop_reason_never_raises(raw):
    reason = loop_reason(parse_bytes(raw), SERVER)
    assert reason is None or isinstance(reason, str)

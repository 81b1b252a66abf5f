"""`[smtp] protocol = "lmtp"`: the same edge behind a mail server (Postfix's lmtp
transport), over a real socket: LHLO, and one reply per recipient after DATA."""

from __future__ import annotations

import smtplib
import socket

from sqlalchemy import select

from mailgen import game_mails
from pbmserv.store.models import Inbound
from test_smtp import RunningServer, read_maildir

SERVER = "pbmserv@localhost"


def test_a_game_over_lmtp(tmp_path, serve_url):
    running = RunningServer(tmp_path, url=serve_url, smtp={"protocol": "lmtp"})
    try:
        mails = game_mails("wari", seed=7)[:4]  # two sign-ups, the challenge, a move
        with smtplib.LMTP("127.0.0.1", running.server.port, local_hostname="localhost") as client:
            for message in mails:
                assert client.send_message(message, to_addrs=[SERVER]) == {}
        replies = running.replies(6)
        assert [r["Subject"] for r in replies] == [
            "pbmserv signup", "pbmserv signup", "New Wari Board 101 alice **", "New Wari Board 101 alice **",
            "Wari Board 101 bob", "Wari Board 101 bob"]
    finally:
        running.stop()


def conversation(port: int, steps: list[tuple[str, int]]) -> list[str]:
    """Send each step's text and read that many replies (a multi-line reply, such as
    LHLO's, counts as one: its last line is kept)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        stream = sock.makefile("rwb")
        replies = [stream.readline().decode().rstrip()]
        for text, count in steps:
            stream.write(text.encode() + b"\r\n")
            stream.flush()
            for _ in range(count):
                reply = stream.readline().decode().rstrip()
                while reply[3:4] == "-":
                    reply = stream.readline().decode().rstrip()
                replies.append(reply)
        return replies


def test_lmtp_answers_data_once_per_recipient_and_stores_the_mail_once(tmp_path, serve_url):
    running = RunningServer(tmp_path, url=serve_url, smtp={"protocol": "lmtp"})
    try:
        replies = conversation(running.server.port, [
            ("LHLO localhost", 1), ("MAIL FROM:<alice@example.org>", 1), (f"RCPT TO:<{SERVER}>", 1),
            ("RCPT TO:<pbmserv+1-0-abc@localhost>", 1), ("DATA", 1),
            ("From: alice@example.org\r\nSubject: help\r\nMessage-ID: <two@example.org>\r\n\r\nhelp\r\n.", 2),
            ("QUIT", 1)])
        assert [r[:3] for r in replies] == ["220", "250", "250", "250", "250", "354", "250", "250", "221"]
        assert replies[6:8] == ["250 2.0.0 Stored", "250 2.0.0 Stored"]
        running.queued()
        with running.sessions() as session:
            raw = session.scalars(select(Inbound.raw)).all()
        assert len(raw) == 1
        assert raw[0].startswith(b"X-Original-To: pbmserv@localhost\r\nX-Original-To: pbmserv+1-0-abc@localhost\r\n")
        assert [r["Subject"] for r in running.replies(1)] == ["pbmserv help"]
    finally:
        running.stop()


def test_lmtp_refuses_helo_and_ehlo(tmp_path, serve_url):
    running = RunningServer(tmp_path, url=serve_url, smtp={"protocol": "lmtp"})
    try:
        with socket.create_connection(("127.0.0.1", running.server.port), timeout=10) as sock:
            stream = sock.makefile("rwb")
            stream.readline()
            for verb in ("HELO", "EHLO"):
                stream.write(f"{verb} localhost\r\n".encode())
                stream.flush()
                assert stream.readline().decode().startswith("500")
        assert read_maildir(running.maildir) == []
    finally:
        running.stop()

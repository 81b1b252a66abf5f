"""Mail loops stop: a second pbmserv instance and a careless auto-responder each get at
most what the loop rules and the backscatter limit allow, then silence."""

from __future__ import annotations

import email.utils
import smtplib
import time
from email.message import EmailMessage

from aiosmtpd.controller import Controller
from sqlalchemy import func, select

from pbmserv.store.models import Inbound, Outbound
from test_smtp import RunningServer, free_port


class Mailbox:
    """An SMTP server standing in for the world: it keeps what it gets and may answer."""

    def __init__(self, answer=None):
        self.received: list[bytes] = []
        self.answer = answer
        self.port = free_port()
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port, server_hostname="world.test")
        self.controller.start()

    async def handle_DATA(self, server, session, envelope):
        self.received.append(envelope.original_content)
        if self.answer is not None:
            self.answer(envelope)
        return "250 OK"


def settle(condition, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # and nothing more follows


def counts(running: RunningServer) -> tuple[int, int]:
    with running.sessions() as session:
        return (session.scalar(select(func.count(Inbound.id))), session.scalar(select(func.count(Outbound.id))))


def test_two_pbmserv_instances_answer_each_other_once(tmp_path):
    """B gets a mail that claims to come from A's address; B's reply reaches A, whose
    loop guard sees `Auto-Submitted` and does not answer."""
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir(), b_dir.mkdir()
    a_port, b_port = free_port(), free_port()
    a = RunningServer(a_dir, server={"address": "pbmserv@a.test"}, smtp={"port": a_port},
                      outbound={"transport": "smtp", "relay_host": "127.0.0.1", "relay_port": b_port})
    b = RunningServer(b_dir, server={"address": "pbmserv@b.test"}, smtp={"port": b_port},
                      outbound={"transport": "smtp", "relay_host": "127.0.0.1", "relay_port": a_port})
    try:
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = "pbmserv@a.test", "pbmserv@b.test", "help"
        message["Message-ID"] = "<forged@a.test>"
        with smtplib.SMTP("127.0.0.1", b_port, local_hostname="localhost") as client:
            client.send_message(message)
        settle(lambda: counts(a)[0] >= 1)
        assert counts(b) == (1, 1)  # B answered once
        assert counts(a) == (1, 0)  # A stored the answer and did not answer it
        with a.sessions() as session:
            assert session.scalars(select(Inbound.error)).one() == "Auto-Submitted mail"
    finally:
        a.stop()
        b.stop()


def test_a_careless_auto_responder_gets_at_most_the_daily_error_limit(tmp_path):
    """An auto-responder that answers everything with a plain mail (no Auto-Submitted,
    no Precedence) gets 'no command' errors only `unregistered_errors_per_day` times."""
    port = free_port()

    def answer(envelope):
        reply = EmailMessage()
        reply["From"], reply["To"], reply["Subject"] = "robot@world.test", "pbmserv@localhost", "I am away"
        reply["Message-ID"] = email.utils.make_msgid(domain="world.test")  # else a duplicate of the last
        reply.set_content("I will read your mail when I am back.")
        with smtplib.SMTP("127.0.0.1", port, local_hostname="localhost") as client:
            client.send_message(reply)

    world = Mailbox(answer)
    running = RunningServer(tmp_path, smtp={"port": port},
                            outbound={"transport": "smtp", "relay_host": "127.0.0.1", "relay_port": world.port})
    try:
        first = EmailMessage()
        first["From"], first["To"], first["Subject"] = "robot@world.test", "pbmserv@localhost", "hello"
        first.set_content("Is anyone there?")
        running.send(first)
        settle(lambda: len(world.received) >= 3)
        assert len(world.received) == 3
        assert counts(running) == (4, 3)  # four mails in, three answers, then silence
    finally:
        running.stop()
        world.controller.stop()

"""Outgoing mail: composing replies as MIME, and the transports that deliver them.

Each queued reply has a stable Message-ID. The Maildir and memory transports deliver
it at most once even if asked twice (after a crash between delivering and marking it
sent); through the SMTP relay a retried reply carries the same Message-ID, so the
receiving side can recognise it. Several senders on one PostgreSQL database each
claim their own replies (`deliver_queued`).
"""

from __future__ import annotations

import email.utils
import logging
import os
import re
import smtplib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.header import Header
from email.message import Message
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from ..config import Config
from ..render import render
from ..store.models import Outbound
from ..store.queue import instance_token, queued_outbound, retry_later

log = logging.getLogger(__name__)

GIVE_UP_AFTER = timedelta(days=5)  # a reply the relay keeps deferring is dropped then


class PermanentFailure(Exception):
    """The relay refused the reply for good (5xx): retrying cannot help."""


@dataclass
class Mail:
    """An outgoing mail before it is rendered to MIME: one per recipient's view."""

    to: list[str]
    subject: str
    body: str
    reply_to: str | None = None  # a board mail's reply-to-play address (replyto.py)


def queue_mails(session: Session, config: Config, mails: list[Mail], key: str, now: datetime,
                in_reply_to: str | None = None, inbound_id: int | None = None) -> None:
    """Render `mails` in the common frame and add them to the outbound queue, in the
    caller's transaction. `key` makes the Message-IDs unique and stable (the inbound
    mail's id, or the deadline that caused them)."""
    instance = instance_token(session, config.server.seed)
    for number, mail in enumerate(mails, start=1):
        if not mail.to:
            continue
        message_id = f"<pbmserv.{instance}.{key}.{number}@{config.domain}>"
        body = render("frame.txt", body=mail.body, address=config.server.address)
        raw = compose(config, mail.to, mail.subject, body, message_id, now, in_reply_to, mail.reply_to)
        session.add(Outbound(inbound_id=inbound_id, message_id=message_id, recipients=mail.to, raw=raw,
                             status="queued", attempts=0, error="", created_at=now))


def compose(config: Config, to: list[str], subject: str, body: str, message_id: str, date: datetime,
            in_reply_to: str | None, reply_to: str | None = None) -> bytes:
    """A plain-text reply, threaded to the command mail, marked as automatic.

    Built with the standard library's compat32 `Message`, whose headers are kept as
    given: six times cheaper than `EmailMessage`, which parses every header it is
    handed (our headers are ours, and only a Subject may need encoding)."""
    message = Message()
    message["From"] = config.server.address
    message["To"] = ", ".join(to)
    message["Subject"] = subject if subject.isascii() else Header(subject, "utf-8")
    message["Date"] = email.utils.format_datetime(date.replace(tzinfo=timezone.utc))
    message["Message-ID"] = message_id
    if reply_to:
        message["Reply-To"] = reply_to
    if in_reply_to:
        message["In-Reply-To"] = in_reply_to
        message["References"] = in_reply_to
    message["Auto-Submitted"] = "auto-replied"
    message["MIME-Version"] = "1.0"
    message["Content-Type"] = 'text/plain; charset="utf-8"'
    # Unencoded text, so the board reads as drawn even in the rawest mail reader; the
    # generator writes 8-bit text given as surrogate-escaped bytes back as those bytes.
    message["Content-Transfer-Encoding"] = "7bit" if body.isascii() else "8bit"
    message.set_payload(body if body.isascii() else body.encode().decode("ascii", "surrogateescape"))
    return message.as_bytes()


class MemoryTransport:
    """Keeps delivered mail in a list: for tests and embedding."""

    batch = 100  # delivering a reply twice keeps one copy, so outcomes are written per batch

    def __init__(self) -> None:
        self.delivered: list[tuple[list[str], bytes]] = []
        self._seen: set[str] = set()

    def deliver(self, recipients: list[str], raw: bytes, message_id: str) -> None:
        if message_id not in self._seen:
            self._seen.add(message_id)
            self.delivered.append((recipients, raw))


class MaildirTransport:
    """Writes each reply as one file of a Maildir's `new/`, named after its Message-ID
    so that delivering the same reply twice leaves one file. `durable`: each file is
    on disk before it counts as delivered (a replay's outbox, which the replay can
    write again, does without)."""

    batch = 100  # delivering a reply twice leaves one file, so outcomes are written per batch

    def __init__(self, path: str | Path, durable: bool = True):
        self.path = Path(path)
        self.durable = durable
        for sub in ("tmp", "new", "cur"):
            (self.path / sub).mkdir(parents=True, exist_ok=True)

    def deliver(self, recipients: list[str], raw: bytes, message_id: str) -> None:
        name = re.sub(r"[^A-Za-z0-9._-]", "_", message_id.strip("<>"))
        if (self.path / "new" / name).exists() or any((self.path / "cur").glob(f"{name}:*")):
            return
        temporary = self.path / "tmp" / f"{name}.{os.getpid()}"
        with open(temporary, "wb") as handle:
            handle.write(raw)
            if self.durable:
                handle.flush()
                os.fsync(handle.fileno())
        try:
            os.link(temporary, self.path / "new" / name)  # unlike a rename, never replaces a file
        except FileExistsError:
            pass
        os.unlink(temporary)


class SmtpTransport:
    """Hands each reply to the configured relay; 4xx and connection errors are
    temporary (the caller retries with backoff), 5xx is a PermanentFailure."""

    batch = 1  # a reply sent twice reaches its player twice: each outcome is written at once

    def __init__(self, host: str, port: int, sender: str, timeout: float = 60):
        self.host, self.port, self.sender, self.timeout = host, port, sender, timeout

    def deliver(self, recipients: list[str], raw: bytes, message_id: str) -> None:
        wire = re.sub(rb"\r?\n", b"\r\n", raw)  # smtplib sends bytes as they are; SMTP wants CRLF
        try:
            with smtplib.SMTP(self.host, self.port, timeout=self.timeout, local_hostname="localhost") as relay:
                refused = relay.sendmail(self.sender, recipients, wire)
        except smtplib.SMTPRecipientsRefused as error:
            codes = [code for code, _text in error.recipients.values()]
            if all(code >= 500 for code in codes):
                raise PermanentFailure(f"all recipients refused: {error.recipients}") from None
            raise
        except smtplib.SMTPResponseException as error:
            if error.smtp_code >= 500:
                raise PermanentFailure(f"{error.smtp_code} {error.smtp_error!r}") from None
            raise
        for address, (code, text) in refused.items():
            log.warning("relay refused %s for %s: %s %r", message_id, address, code, text)


def make_transport(config: Config, maildir: str | Path | None = None):
    """The configured transport; `maildir` forces a Maildir (replay's outbox)."""
    if maildir is not None or config.outbound.transport == "maildir":
        return MaildirTransport(maildir or config.outbound.maildir)
    if config.outbound.transport == "memory":
        return MemoryTransport()
    return SmtpTransport(config.outbound.relay_host, config.outbound.relay_port, config.server.address)


def deliver_queued(sessions: sessionmaker[Session], transport, now: datetime) -> int:
    """Deliver every reply that is due; a failure is retried later with backoff.

    Each batch of `transport.batch` replies is claimed, delivered, and its outcomes
    written. On PostgreSQL the claim is a row lock held through the delivery, so
    several senders on one database never deliver the same reply, and a sender that
    dies lets go of its batch at once (its connection closes). SQLite has one write
    lock for the whole database and a single sender: there no transaction is open while
    replies are on their way (a slow relay must not hold up the listener or the worker).
    A crash between delivering and writing the outcome delivers the batch again, which
    a Maildir absorbs (one file per Message-ID) and a relay would not (its batch is 1)."""
    delivered = 0
    while True:
        with sessions() as session:
            due = [(row.id, row.recipients, row.raw, row.message_id)
                   for row in queued_outbound(session, now, limit=transport.batch)]
            if session.bind.dialect.name == "sqlite":
                session.close()  # its write lock is let go; the outcomes take it again
            outcomes = []
            for row_id, recipients, raw, message_id in due:
                failure: Exception | None = None
                try:
                    transport.deliver(recipients, raw, message_id)
                except (PermanentFailure, OSError) as error:  # smtplib's errors are OSErrors too
                    failure = error
                outcomes.append((row_id, recipients, message_id, failure))
            delivered += record_outcomes(session, outcomes, now)
            session.commit()
        if len(due) < transport.batch:
            return delivered


def record_outcomes(session: Session, outcomes: list, now: datetime) -> int:
    """Mark delivered replies sent, refused ones failed, the others for a retry; the
    number delivered."""
    delivered = 0
    for row_id, recipients, message_id, failure in outcomes:
        row = session.get(Outbound, row_id)
        if failure is None:
            row.status = "sent"
            row.attempts += 1
            delivered += 1
        elif isinstance(failure, PermanentFailure):
            row.status, row.error = "failed", str(failure)
            row.attempts += 1
            log.error("reply %s to %s refused for good: %s", message_id, recipients, failure)
        else:
            retry_later(row, now, f"{failure.__class__.__name__}: {failure}")
            if now - row.created_at > GIVE_UP_AFTER:
                row.status = "failed"
                log.error("reply %s to %s dropped after %s of retries: %s", message_id, recipients,
                          GIVE_UP_AFTER, row.error)
    return delivered

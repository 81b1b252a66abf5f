"""Outgoing mail: composing replies as MIME, and the transports that deliver them.

Each queued reply has a stable Message-ID. The Maildir and memory transports deliver
it at most once even if asked twice (after a crash between delivering and marking it
sent); through the SMTP relay a retried reply carries the same Message-ID, so the
receiving side can recognise it. Several senders on one PostgreSQL database each
claim their own replies (`deliver_queued`).
"""

from __future__ import annotations

import contextlib
import ctypes
import email.utils
import hashlib
import io
import logging
import os
import quopri
import re
import smtplib
import sys
import weakref
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.generator import BytesGenerator
from email.header import Header
from email.message import Message
from email.policy import Compat32
from pathlib import Path

from sqlalchemy import bindparam, false, insert, select, update
from sqlalchemy.orm import Session, sessionmaker

from ..config import Config
from ..keys import address_tag, make_tag, server_key, split_tag, tag_valid, tagged_address
from ..games import get_game
from ..render import board_html, fill, render, render_html
from ..store.db import OnDriver, in_memory_sqlite, make_engine, tables
from ..store.models import Address, Outbound, User
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
    boards: list = field(default_factory=list)  # the boards (`play.Board`) the body shows, in order
    html: bool | None = None  # its reader's `html` preference where known; else asked by address


def queue_mails(session: Session, config: Config, mails: list[Mail], key: str, now: datetime,
                in_reply_to: str | None = None, inbound_id: int | None = None) -> None:
    """Add `mails` to the outbound queue as drafts, in the caller's transaction; the
    sender renders each (`render_draft`) before it delivers it, outside the worker's
    transaction and process. `key` makes the Message-IDs unique and stable (the
    inbound mail's id, or the deadline that caused them). A mail that shows boards
    gets an HTML part too, unless a reader of it chose `html off`."""
    instance = instance_token(session, config.server.seed)
    text_only = plain_readers(session, [mail for mail in mails if mail.boards and mail.html is None])
    rows = []
    for number, mail in enumerate(mails, start=1):
        if not mail.to:
            continue
        message_id = f"<pbmserv.{instance}.{key}.{number}@{config.domain}>"
        html = None
        if mail.boards and mail.html is not False and not text_only & {address.lower() for address in mail.to}:
            html = html_pieces(mail)
        draft = dict(sender=config.server.address, subject=mail.subject, in_reply_to=in_reply_to,
                     body=render("frame.txt", body=fill(mail.body), address=config.server.address),
                     reply_to=mail.reply_to, html=html)  # its recipients, Message-ID and date are the row's
        rows.append(dict(inbound_id=inbound_id, message_id=message_id, recipients=mail.to, raw=b"", draft=draft,
                         status="queued", attempts=0, error="", created_at=now))
    if rows:  # one statement for them all
        QUEUE_REPLIES.run(tables(session), rows)


# Statements of every board mail, built once: building and keying a statement costs
# about as much as running it.
PLAIN_READERS = OnDriver(select(Address.address_key).join(User).where(
    User.html == false(), Address.address_key.in_(bindparam("addresses", expanding=True))))
QUEUE_REPLIES = OnDriver(insert(Outbound.__table__))  # the table's: the ORM's bulk path costs as much again


def plain_readers(session: Session, mails: list[Mail]) -> set[str]:
    """Of the addresses `mails` go to, those (lower case) of users who chose `html off`."""
    addresses = {address.lower() for mail in mails for address in mail.to}
    if not addresses:
        return set()
    return {address for (address,) in PLAIN_READERS.run(tables(session), {"addresses": list(addresses)})[0]}


def html_pieces(mail: Mail) -> list[list]:
    """What the HTML part of a mail that shows boards is drawn from: its text around the
    boards, as ["text", text] and ["board", what its drawing needs] (`play.Board`)."""
    pieces: list[list] = []
    rest = mail.body
    for board in mail.boards:
        before, found, after = rest.partition(board.text.rstrip("\n"))
        if not found:  # a body that does not show the board as drawn: text only
            continue
        pieces += [["text", before.strip("\n")],
                   ["board", dict(game=board.game.name, view=board.view, context=board.context)]]
        rest = after
    pieces.append(["text", rest.strip("\n")])
    return [piece for piece in pieces if piece[1]]


def render_draft(draft: dict, recipients: list[str], message_id: str, date: datetime) -> bytes:
    """A queued reply's bytes: its text and, for a mail that shows boards, the same text
    around each board drawn as HTML (`templates/frame.html` and `board.html`)."""
    html = None
    if draft["html"] is not None:
        pieces = [(kind, board_html(get_game(part["game"]), part["view"], part["context"]) if kind == "board"
                   else part) for kind, part in draft["html"]]
        html = render_html("frame.html", pieces=pieces, subject=draft["subject"], address=draft["sender"],
                           reply_to=draft["reply_to"])
    return compose(draft["sender"], recipients, draft["subject"], draft["body"], message_id, date,
                   draft["in_reply_to"], draft["reply_to"], html)


def compose(sender: str, to: list[str], subject: str, body: str, message_id: str, date: datetime,
            in_reply_to: str | None, reply_to: str | None = None, html: str | None = None) -> bytes:
    """A reply from `sender` (the server's address), threaded to the command mail,
    marked as automatic: plain text, or `multipart/alternative` with `html` after the
    same text (the part a client that draws HTML shows).

    Written directly where every header fits on its line as given and no text holds a
    carriage return (every reply the server writes): the bytes `mime_message`'s
    generator writes (tested), at a fifth of the cost; otherwise by that generator."""
    headers = reply_headers(sender, to, subject, message_id, date, in_reply_to, reply_to)
    if "\r" in body or (html is not None and "\r" in html) or not all(
            fits_unfolded(name, value) for name, value in headers):
        return as_bytes(mime_message(sender, to, subject, body, message_id, date, in_reply_to, reply_to, html))
    head = "".join(f"{name}: {value}\n" for name, value in headers)
    if html is None:
        return (head + text_headers(body)).encode("ascii") + body.encode()
    boundary = mime_boundary(message_id)
    return b"".join([
        f'{head}Content-Type: multipart/alternative;\n boundary="{boundary}"\n\n--{boundary}\n'
        f"{text_headers(body)}".encode("ascii"), body.encode(),
        f'\n--{boundary}\nContent-Type: text/html; charset="utf-8"\n'
        f"Content-Transfer-Encoding: quoted-printable\n\n".encode("ascii"), quopri.encodestring(html.encode()),
        f"\n--{boundary}--\n".encode("ascii")])


def reply_headers(sender: str, to: list[str], subject: str, message_id: str, date: datetime,
                  in_reply_to: str | None, reply_to: str | None) -> list[tuple[str, str]]:
    """A reply's headers before its MIME ones, in their order."""
    headers = [("From", sender), ("To", ", ".join(to)), ("Subject", subject),
               ("Date", email.utils.format_datetime(date.replace(tzinfo=timezone.utc))), ("Message-ID", message_id)]
    if reply_to:
        headers.append(("Reply-To", reply_to))
    if in_reply_to:
        headers += [("In-Reply-To", in_reply_to), ("References", in_reply_to)]
    return headers + [("Auto-Submitted", "auto-replied"), ("MIME-Version", "1.0")]


def mime_boundary(message_id: str) -> str:
    """The multipart boundary, from the Message-ID: a replay writes the same bytes."""
    return "=_pbmserv_" + hashlib.sha256(message_id.encode()).hexdigest()[:32]


def text_headers(body: str) -> str:
    """The text part's headers and the blank line after them: the text goes unencoded,
    so the board reads as drawn even in the rawest mail reader."""
    encoding = "7bit" if body.isascii() else "8bit"
    return f'Content-Type: text/plain; charset="utf-8"\nContent-Transfer-Encoding: {encoding}\n\n'


def mime_message(sender: str, to: list[str], subject: str, body: str, message_id: str, date: datetime,
                 in_reply_to: str | None, reply_to: str | None = None, html: str | None = None) -> Message:
    """`compose`'s reply as the standard library's compat32 `Message`, whose headers
    are kept as given: six times cheaper than `EmailMessage`, which parses every
    header it is handed (our headers are ours, and only a Subject may need encoding)."""
    message = Message()
    for name, value in reply_headers(sender, to, subject, message_id, date, in_reply_to, reply_to):
        message[name] = Header(value, "utf-8") if name == "Subject" and not value.isascii() else value
    if html is None:
        text_part(message, body)
        return message
    message["Content-Type"] = f'multipart/alternative; boundary="{mime_boundary(message_id)}"'
    plain, rich = Message(), Message()
    text_part(plain, body)
    rich["Content-Type"] = 'text/html; charset="utf-8"'
    rich["Content-Transfer-Encoding"] = "quoted-printable"  # lines of at most 76 characters
    rich.set_payload(quopri.encodestring(html.encode()).decode("ascii"))
    message.set_payload([plain, rich])
    return message


class ReplyPolicy(Compat32):
    """compat32, but a header that needs no folding is written as it is given. The
    `Header` class's folding costs about 30 µs a header, and all but a long To or a
    non-ASCII Subject fit on one line; for those it gives the same bytes (tested)."""

    def fold_binary(self, name: str, value) -> bytes:
        if isinstance(value, str) and fits_unfolded(name, value):
            return f"{name}: {value}{self.linesep}".encode("ascii")
        return super().fold_binary(name, value)


def fits_unfolded(name: str, value: str) -> bool:
    """Whether `name: value` is one printable ASCII line of at most 78 characters
    with single spaces: what `Header` would leave exactly as it is."""
    return (len(name) + len(value) + 2 <= 78 and value.isascii() and value.isprintable()
            and "  " not in value and value.strip() == value)


REPLY_POLICY = ReplyPolicy()


class ReplyGenerator(BytesGenerator):
    """`BytesGenerator` writing a payload of `\\n` lines in one piece, as the same
    lines: the standard one writes it line by line, 500 writes for a board mail."""

    def _write_lines(self, lines: str) -> None:
        if self._NL == "\n" and "\r" not in lines:
            self.write(lines)
        else:
            super()._write_lines(lines)


def as_bytes(message: Message) -> bytes:
    """`message.as_bytes()`, by the cheaper policy and generator above."""
    out = io.BytesIO()
    ReplyGenerator(out, mangle_from_=False, policy=REPLY_POLICY).flatten(message)
    return out.getvalue()


def text_part(message: Message, body: str) -> None:
    """`body` as the text/plain payload of `message`: unencoded, so the board reads as
    drawn even in the rawest mail reader; the generator writes 8-bit text given as
    surrogate-escaped bytes back as those bytes."""
    message["Content-Type"] = 'text/plain; charset="utf-8"'
    message["Content-Transfer-Encoding"] = "7bit" if body.isascii() else "8bit"
    message.set_payload(body if body.isascii() else body.encode().decode("ascii", "surrogateescape"))


def with_headers(raw: bytes, name: str, values: list[str]) -> bytes:
    """`raw` with a `name: value` line for each of `values` first, in the line ending
    `raw` uses (as a delivering MTA adds Return-Path or X-Original-To)."""
    newline = b"\r\n" if b"\r\n" in raw[:2000] else b"\n"
    prefix = name.encode() + b": "
    return b"".join(prefix + value.encode("utf-8", "replace") + newline for value in values) + raw


def envelope_sender(session: Session, server_address: str, outbound_id: int) -> str:
    """The envelope sender of one reply, `local+b-ID-MAC@domain`: a bounce comes back
    to it, naming the reply it is about in a way nobody can forge (VERP)."""
    return tagged_address(server_address, make_tag(session, "b", str(outbound_id)))


def bounced_reply(session: Session, server_address: str, recipient: str) -> Outbound | None:
    """The reply whose envelope sender `recipient` is (a To, Delivered-To or
    X-Original-To address of a delivery report), if its tag is genuine; else None."""
    parts = split_tag(address_tag(server_address, recipient) or "")
    if parts is None:
        return None
    kind, payload, given = parts
    if kind != "b" or not tag_valid(session, kind, payload, given):  # the MAC first: only ids we made
        return None
    return session.get(Outbound, int(payload))


class MemoryTransport:
    """Keeps delivered mail in a list, `(recipients, raw)`, and the envelope sender of
    each in the parallel list `senders`: for tests and embedding."""

    batch = 100  # delivering a reply twice keeps one copy, so outcomes are written per batch

    def __init__(self, server_address: str = "pbmserv@localhost") -> None:
        self.server_address = server_address
        self.delivered: list[tuple[list[str], bytes]] = []
        self.senders: list[str] = []
        self._seen: set[str] = set()

    def deliver(self, recipients: list[str], raw: bytes, message_id: str, sender: str) -> None:
        if message_id not in self._seen:
            self._seen.add(message_id)
            self.delivered.append((recipients, raw))
            self.senders.append(sender)


class MaildirTransport:
    """Writes each reply as one file of a Maildir's `new/`, named after its Message-ID
    so that delivering the same reply twice leaves one file, with the envelope sender
    in a `Return-Path` line first, as a delivering MTA writes it. `durable`: each file
    is on disk before it counts as delivered (a replay's outbox, which the replay can
    write again, does without)."""

    batch = 100  # delivering a reply twice leaves one file, so outcomes are written per batch

    def __init__(self, path: str | Path, durable: bool = True, server_address: str = "pbmserv@localhost"):
        self.path = Path(path)
        self.durable = durable
        self.server_address = server_address
        for sub in ("tmp", "new", "cur"):
            (self.path / sub).mkdir(parents=True, exist_ok=True)
        # its folders as strings: pathlib's joins cost more than the rest of a reply's Python
        self.tmp, self.new, self.cur = (os.path.join(self.path, sub) for sub in ("tmp", "new", "cur"))

    def deliver(self, recipients: list[str], raw: bytes, message_id: str, sender: str) -> None:
        failure = self.deliver_batch([(recipients, raw, message_id, sender)])[0]
        if failure is not None:
            raise failure

    def deliver_batch(self, replies: list[tuple[list[str], bytes, str, str]]) -> list[Exception | None]:
        """Deliver (recipients, raw, message_id, sender) each; what went wrong with each
        (None: delivered). The folder of read mail is listed once for the batch; every
        file is written, then all are synced, then linked into `new/`, and the links
        synced: a reader never sees a file that may not be on disk."""
        read = {name.partition(":")[0] for name in os.listdir(self.cur)}  # moved there by a reader
        failures: list[Exception | None] = [None] * len(replies)
        written = []  # (index, the open file, its path in tmp/, its path in new/)
        for index, (_recipients, raw, message_id, sender) in enumerate(replies):
            try:
                begun = self._write(raw, message_id, sender, read)
                if begun is not None:
                    written.append((index, *begun))
            except Exception as error:  # noqa: BLE001 - one reply's failure is its own
                failures[index] = error
        if self.durable:
            written = synced(written, failures)
        for index, handle, temporary, final in written:
            try:
                handle.close()
                try:
                    os.link(temporary, final)  # unlike a rename, never replaces a file
                except FileExistsError:
                    pass
                os.unlink(temporary)
            except Exception as error:  # noqa: BLE001 - one reply's failure is its own
                failures[index] = error
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
        if self.durable and any(failure is None for failure in failures):
            try:
                folder = os.open(self.new, os.O_RDONLY)
                try:
                    (sync_filesystem if SYNCFS else os.fsync)(folder)
                finally:
                    os.close(folder)
            except OSError as error:  # the links may not be on disk: none counts as delivered
                failures = [failure or error for failure in failures]
        return failures

    def _write(self, raw: bytes, message_id: str, sender: str, read: set[str]):
        """The reply written to a file in tmp/, left open: (the file, its path, its name
        in new/); None if it is delivered already."""
        name = re.sub(r"[^A-Za-z0-9._-]", "_", message_id.strip("<>"))
        final = os.path.join(self.new, name)
        if name in read or os.path.exists(final):
            return None
        temporary = os.path.join(self.tmp, f"{name}.{os.getpid()}")
        handle = open(temporary, "wb")
        try:
            handle.write(with_headers(raw, "Return-Path", [f"<{sender}>"]))
            handle.flush()
        except BaseException:
            handle.close()
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        return handle, temporary, final


def _syncfs():
    """Linux's syncfs(2), or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        call = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    call.argtypes, call.restype = [ctypes.c_int], ctypes.c_int
    return call


# One sync of the filesystem costs a disk flush, as one file's fsync does: a batch of
# 100 replies took 20-32 ms of fsyncs and 2 ms of syncfs, and serve's sender waited
# about 0.6 ms a move for its fsyncs (2026-12-07, docs/performance.md).
SYNCFS = _syncfs()


def sync_filesystem(fd: int) -> None:
    """Everything written to the filesystem holding `fd` on disk (Linux's syncfs).
    Since Linux 5.8 it reports a failed write-back, as fsync does. It also writes
    what other programs have left unsynced there: what ext4's journal does for every
    fsync."""
    if SYNCFS(fd) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))


def synced(written: list, failures: list[Exception | None]) -> list:
    """Of a batch's files written (index, open file, its path in tmp/, its path in
    new/), those now on disk; the others are removed and their failures set. One
    syncfs for them all where there is one, else an fsync each."""
    if SYNCFS and written:
        try:
            sync_filesystem(written[0][1].fileno())
            return written
        except OSError as error:
            return dropped(written, failures, error)
    kept = []
    for entry in written:
        try:
            os.fsync(entry[1].fileno())
            kept.append(entry)
        except Exception as error:  # noqa: BLE001 - one reply's failure is its own
            dropped([entry], failures, error)
    return kept


def dropped(entries: list, failures: list[Exception | None], error: Exception) -> list:
    """Close and remove files written (`synced`'s entries) that failed with `error`."""
    for index, handle, temporary, _final in entries:
        failures[index] = error
        handle.close()
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    return []


class SmtpTransport:
    """Hands each reply to the configured relay, with its own envelope sender; 4xx and
    connection errors are temporary (the caller retries with backoff), 5xx is a
    PermanentFailure. An address that is not ASCII needs the relay's SMTPUTF8."""

    batch = 1  # a reply sent twice reaches its player twice: each outcome is written at once

    def __init__(self, host: str, port: int, server_address: str, timeout: float = 60):
        self.host, self.port, self.server_address, self.timeout = host, port, server_address, timeout

    def deliver(self, recipients: list[str], raw: bytes, message_id: str, sender: str) -> None:
        wire = re.sub(rb"\r?\n", b"\r\n", raw)  # smtplib sends bytes as they are; SMTP wants CRLF
        wide = [address for address in [sender, *recipients] if not address.isascii()]
        try:
            with smtplib.SMTP(self.host, self.port, timeout=self.timeout, local_hostname="localhost") as relay:
                relay.ehlo_or_helo_if_needed()
                if wide and not relay.has_extn("smtputf8"):
                    raise PermanentFailure(f"the relay does not offer SMTPUTF8, which the address {wide[0]} needs")
                refused = relay.sendmail(sender, recipients, wire, mail_options=["SMTPUTF8"] if wide else [])
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
    address = config.server.address
    if maildir is not None or config.outbound.transport == "maildir":
        return MaildirTransport(maildir or config.outbound.maildir, server_address=address)
    if config.outbound.transport == "memory":
        return MemoryTransport(address)
    return SmtpTransport(config.outbound.relay_host, config.outbound.relay_port, address)


def deliver_queued(sessions: sessionmaker[Session], transport, now: datetime) -> int:
    """Deliver every reply that is due; a failure is retried later with backoff.

    Each batch of `transport.batch` replies is claimed, delivered, and its outcomes
    written. On PostgreSQL the claim is a row lock held through the delivery, so
    several senders on one database never deliver the same reply, and a sender that
    dies lets go of its batch at once (its connection closes). SQLite has one write
    lock for the whole database and a single sender: there no transaction is open while
    replies are on their way (a slow relay must not hold up the listener or the worker).
    A crash between delivering and writing the outcome delivers the batch again, which
    a Maildir absorbs (one file per Message-ID) and a relay would not (its batch is 1).
    Whatever goes wrong delivering one reply (an address the relay cannot take, a
    bug) is that reply's outcome alone: the others go on."""
    with sessions.begin() as session:
        server_key(session)  # made and committed before any envelope sender is signed with it
    delivered = 0
    while True:
        with sessions() as session:
            due = claim_replies(sessions, session, transport, now)
            rendered = [rendering(row) for row, _sender in due]
            failures = [failure for _raw, failure in rendered]
            ready = {index: (row.recipients, raw, row.message_id, sender)
                     for index, ((row, sender), (raw, failure)) in enumerate(zip(due, rendered)) if failure is None}
            for index, failure in zip(ready, deliver_all(transport, list(ready.values()))):
                failures[index] = failure
            outcomes = [(row.id, row.recipients, row.message_id, raw if row.draft is not None else None, failure)
                        for (row, _sender), (raw, _), failure in zip(due, rendered, failures)]
            delivered += record_outcomes(session, outcomes, now)
            session.commit()
        if len(due) < transport.batch:
            return delivered


_readers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # engine -> its reading sessionmaker


def claim_replies(sessions: sessionmaker[Session], session: Session, transport, now: datetime) -> list:
    """A batch of the replies due, each with its envelope sender. On PostgreSQL in
    `session`, whose claim locks them until their outcomes are written. SQLite has
    one sender and one write lock, and there the claim is a read: through an engine
    of its own that takes no write turn (in WAL mode such a read never waits for the
    worker's transaction), and nothing stays open while the replies are on their way."""
    engine = sessions.kw["bind"]
    if engine.dialect.name != "sqlite" or in_memory_sqlite(engine.url):
        reading = contextlib.nullcontext(session)
    else:
        if engine not in _readers:
            _readers[engine] = sessionmaker(make_engine(engine.url.render_as_string(hide_password=False),
                                                        immediate=False))
        reading = _readers[engine]()
    with reading as claiming:
        return [(row, envelope_sender(claiming, transport.server_address, row.id))
                for row in queued_outbound(claiming, now, limit=transport.batch)]


def rendering(row) -> tuple[bytes, Exception | None]:
    """A queued reply's bytes (rendered from its draft, unless that was done before) and
    what went wrong rendering them (None): a bug in one draft is that reply's alone."""
    if row.draft is None:
        return row.raw, None
    try:
        return render_draft(row.draft, row.recipients, row.message_id, row.created_at), None
    except Exception as error:  # noqa: BLE001 - the reply fails, for good; the others go on
        return b"", error


def deliver_all(transport, replies: list[tuple[list[str], bytes, str, str]]) -> list[Exception | None]:
    """Hand each reply (recipients, raw, message_id, sender) to `transport`, in one batch
    where it takes batches; what went wrong with each (None: delivered). Whatever goes
    wrong with one reply (an address the relay cannot take, a bug) is its alone."""
    if hasattr(transport, "deliver_batch"):
        return transport.deliver_batch(replies)
    failures: list[Exception | None] = []
    for reply in replies:
        try:
            transport.deliver(*reply)
            failures.append(None)
        except Exception as error:  # noqa: BLE001 - one reply's failure is its own
            failures.append(error)
    return failures


outbound = Outbound.__table__.c
# built once
MARK_SENT = (update(Outbound.__table__).where(outbound.id.in_(bindparam("ids", expanding=True)))
             .values(status="sent", attempts=outbound.attempts + 1))
MARK_RENDERED_SENT = (update(Outbound.__table__).where(outbound.id == bindparam("row_id"))
                      .values(status="sent", attempts=outbound.attempts + 1, raw=bindparam("rendered"), draft=None))


def record_outcomes(session: Session, outcomes: list, now: datetime) -> int:
    """Mark delivered replies sent (in one statement, and one more for those rendered
    now, whose bytes take the place of their drafts); those that failed for a reason
    retrying may cure (an OSError: connections, timeouts, the relay's 4xx) for a retry,
    any other failed (a 5xx, an address the relay cannot take, a bug: an admin may retry
    it with `pbmserv queue retry`); the number delivered. Outcomes are (id, recipients,
    Message-ID, the bytes rendered now or None, what went wrong or None)."""
    sent = [row_id for row_id, _recipients, _message_id, raw, failure in outcomes if failure is None and raw is None]
    if sent:
        tables(session).execute(MARK_SENT, {"ids": sent})
    rendered = [dict(row_id=row_id, rendered=raw)
                for row_id, _recipients, _message_id, raw, failure in outcomes if failure is None and raw is not None]
    if rendered:
        tables(session).execute(MARK_RENDERED_SENT, rendered)
    for row_id, recipients, message_id, raw, failure in outcomes:
        if failure is None:
            continue
        row = session.get(Outbound, row_id)
        if raw:  # rendered: it is retried as it was sent
            row.raw, row.draft = raw, None
        if not isinstance(failure, OSError):  # smtplib's errors are OSErrors too
            reason = str(failure) if isinstance(failure, PermanentFailure) else describe(failure)
            row.status, row.error = "failed", reason
            row.attempts += 1
            log.error("reply %s to %s failed for good: %s", message_id, recipients, reason,
                      exc_info=None if isinstance(failure, PermanentFailure) else failure)
        else:
            retry_later(row, now, describe(failure))
            if now - row.created_at > GIVE_UP_AFTER:
                row.status = "failed"
                log.error("reply %s to %s dropped after %s of retries: %s", message_id, recipients,
                          GIVE_UP_AFTER, row.error)
            else:
                log.warning("reply %s to %s deferred: %s", message_id, recipients, row.error)
    return len(sent) + len(rendered)


def describe(error: Exception) -> str:
    return f"{error.__class__.__name__}: {error}"

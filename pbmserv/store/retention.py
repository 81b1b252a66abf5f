"""Secrets at rest: what stored mail may keep, and for how long.

Every command mail is kept raw (a crash never loses one, an admin can retry it), and
every reply until it is delivered. Both hold secrets: passwords and tokens in the
commands, reset, confirmation and reply-to-play tokens in the replies. After `[limits]
keep_raw_days` a processed mail keeps its headers and text with its passwords masked,
a delivered reply is deleted, and a reply that never went out keeps its text with its
tokens masked. Inbound rows themselves stay: moves refer to them.

`retain` works in bounded batches, each its own transaction, so that no pass holds
the database for long; `serve` runs it about once an hour and `tick` once a run.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import EmailMessage

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from ..commands.lines import read_command_mail
from ..config import Config
from ..mail.loopguard import clean_text, parse_bytes
from ..mail.parse import _decode_part, body_text, clean_lines
from ..mail.text import MASK, Masker
from .models import Inbound, Outbound, RateEvent

log = logging.getLogger(__name__)

BATCH = 500  # rows a transaction
RATE_WINDOW = timedelta(days=2)  # rate events older than this count for nothing (the longest window is a day)
TOKEN = re.compile(rb"\b[0-9a-fA-F]{16}\b")  # a mailed token (confirm, reset): sixteen hex digits
UNREADABLE = b"X-Pbmserv-Removed: this mail could not be read to mask its passwords\r\n\r\n"
MIME_HEADERS = {"content-type", "content-transfer-encoding", "mime-version", "content-disposition"}


@dataclass
class Retained:
    """What one pass did."""

    masked: int = 0  # command mails whose passwords were masked
    deleted: int = 0  # delivered replies deleted
    scrubbed: int = 0  # undelivered replies whose tokens were masked
    events: int = 0  # rate events deleted


def retain(sessions: sessionmaker[Session], config: Config, now: datetime) -> Retained:
    """Mask, delete and forget what has been kept for longer than `[limits] keep_raw_days`."""
    cutoff = now - timedelta(days=config.limits.keep_raw_days)
    done = Retained()
    while (count := mask_inbound_batch(sessions, config, cutoff)):
        done.masked += count
    while (count := delete_batch(sessions, Outbound, Outbound.status == "sent", Outbound.created_at < cutoff)):
        done.deleted += count
    done.scrubbed = scrub_failed_outbound(sessions, config, cutoff)
    while (count := delete_batch(sessions, RateEvent, RateEvent.at < now - RATE_WINDOW)):
        done.events += count
    return done


def mask_inbound_batch(sessions: sessionmaker[Session], config: Config, cutoff: datetime) -> int:
    """Mask the passwords of up to BATCH processed mails older than `cutoff`."""
    with sessions.begin() as session:
        rows = session.scalars(
            select(Inbound).where(Inbound.masked.is_(False), Inbound.processed_at.is_not(None),
                                  Inbound.processed_at < cutoff,
                                  Inbound.status.in_(("done", "ignored", "failed")))
            .order_by(Inbound.id).limit(BATCH).with_for_update(skip_locked=True)).all()
        for row in rows:
            try:
                row.raw = masked_command_mail(row.raw, config.server.address)
            except Exception:  # noqa: BLE001 - a mail that cannot be masked is not kept at all
                log.exception("mail %s could not be masked; its text is removed", row.id)
                row.raw = UNREADABLE
            row.masked = True
        return len(rows)


def delete_batch(sessions: sessionmaker[Session], model, *where) -> int:
    """Delete up to BATCH rows of `model` matching `where`; how many."""
    with sessions.begin() as session:
        ids = session.scalars(select(model.id).where(*where).order_by(model.id).limit(BATCH)).all()
        if ids:
            session.execute(delete(model).where(model.id.in_(ids)))
        return len(ids)


def scrub_failed_outbound(sessions: sessionmaker[Session], config: Config, cutoff: datetime) -> int:
    """Mask the tokens of the replies given up on before `cutoff`, BATCH at a time;
    how many changed (a row masked before does not change again)."""
    changed, after = 0, 0
    while True:
        with sessions.begin() as session:
            rows = session.scalars(
                select(Outbound).where(Outbound.status == "failed", Outbound.created_at < cutoff,
                                       Outbound.id > after)
                .order_by(Outbound.id).limit(BATCH).with_for_update(skip_locked=True)).all()
            for row in rows:
                scrubbed = masked_reply(row.raw, config.server.address)
                draft = row.draft and json.loads(masked_reply(json.dumps(row.draft).encode(), config.server.address))
                if scrubbed != row.raw or draft != row.draft:  # a draft left: its rendering failed
                    row.raw, row.draft = scrubbed, draft
                    changed += 1
        if len(rows) < BATCH:
            return changed
        after = rows[-1].id


def masked_reply(raw: bytes, server_address: str) -> bytes:
    """A reply of the server (plain 7- or 8-bit text) without its tokens: every
    `local+TAG@` sub-address of the server and every word of sixteen hex digits."""
    local = re.escape(server_address.rpartition("@")[0].encode())
    raw = re.sub(rb"\b(" + local + rb")\+[^@\s]+@", rb"\1+" + MASK.encode() + b"@", raw, flags=re.IGNORECASE)
    return TOKEN.sub(MASK.encode(), raw)


def masked_command_mail(raw: bytes, server_address: str) -> bytes:
    """A command mail without the passwords and tokens of its command lines.

    They are masked where they appear literally in the bytes. If any is still there
    once decoded (a base64 or quoted-printable body, an encoded Subject), the mail is
    written anew: its headers and its text body as plain UTF-8 text, masked."""
    mail, mask = read_command_mail(parse_bytes(raw), server_address)
    # latin-1 maps each byte to one character and back: the bytes around stay as they were
    in_bytes = Masker([secret.encode("utf-8", "surrogateescape").decode("latin-1") for secret in mask.secrets],
                      server_address)
    literal = in_bytes(raw.decode("latin-1")).encode("latin-1")
    message = parse_bytes(literal)
    texts = [value for _name, value in headers(message)]
    texts += [_decode_part(part) for part in message.walk() if not part.is_multipart()]
    if not mail.truncated and not any(mask(text) != text or any(secret in text for secret in mask.secrets)
                                      for text in map(cleaned, texts)):  # a part such as <p>PASSWORD</p> too
        return literal  # (a body longer than the worker reads may hide passwords it never saw: written anew)
    new = EmailMessage()
    for name, value in headers(message):
        if name.lower() not in MIME_HEADERS:
            try:
                new[name] = " ".join(mask(cleaned(value)).split())
            except Exception:  # noqa: BLE001 - a value no header can take is left out
                pass
    new.set_content(mask(cleaned(body_text(message))))
    return new.as_bytes()


def cleaned(text: str) -> str:
    """`text` as the worker reads it (no invisible characters), so that what it took
    for a password is seen as one here too."""
    return "\n".join(clean_lines(clean_text(text)))


def headers(message: EmailMessage) -> list[tuple[str, str]]:
    """Every header of `message`, decoded; one the parser cannot read, as written."""
    found = []
    for name, value in message.raw_items():
        try:
            found.append((name, str(message.policy.header_fetch_parse(name, value))))
        except Exception:  # noqa: BLE001 - hostile or broken: its raw text
            found.append((name, value))
    return found

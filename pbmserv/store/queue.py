"""The inbound and outbound mail queues: store first, then work, never lose a message."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from ..mail.loopguard import header_text, parse_bytes
from .models import Inbound, Outbound
from .repo import fixed_setting


def message_key(raw: bytes) -> str:
    """The duplicate key of a mail: its Message-ID, or a hash of its bytes without one."""
    message_id = header_text(parse_bytes(raw, headers_only=True), "Message-ID").strip()
    if message_id:
        return message_id[:998]
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def enqueue(sessions: sessionmaker[Session], raw: bytes, received_at: datetime,
            envelope_from: str | None = None) -> tuple[int, bool]:
    """Store a raw mail durably; (its id, False) if the same mail was stored before."""
    key = message_key(raw)
    with sessions() as session:
        existing = session.scalar(select(Inbound.id).where(Inbound.message_id == key))
        if existing is not None:
            return existing, False
        row = Inbound(message_id=key, raw=raw, envelope_from=envelope_from,
                      received_at=received_at, status="queued", error="")
        session.add(row)
        try:
            session.commit()
        except IntegrityError:  # stored meanwhile by another connection
            session.rollback()
            return session.scalar(select(Inbound.id).where(Inbound.message_id == key)), False
        return row.id, True


def queued_inbound_ids(session: Session) -> list[int]:
    """Waiting mail in arrival order."""
    return list(session.scalars(select(Inbound.id).where(Inbound.status == "queued").order_by(Inbound.id)))


def queued_outbound(session: Session, now: datetime, limit: int) -> list[Outbound]:
    """Replies due at `now`, oldest first, claimed: on PostgreSQL they stay locked until
    `session`'s transaction ends, and another sender skips them meanwhile."""
    return list(session.scalars(
        select(Outbound).where(Outbound.status == "queued",
                               Outbound.next_attempt_at.is_(None) | (Outbound.next_attempt_at <= now))
        .order_by(Outbound.id).limit(limit).with_for_update(skip_locked=True)))


def retry_later(row: Outbound, now: datetime, error: str) -> None:
    """Back off exponentially (1 min doubling, at most 4 h between tries)."""
    row.attempts += 1
    row.error = error
    row.next_attempt_at = now + timedelta(minutes=min(2 ** (row.attempts - 1), 240))


def instance_token(session: Session, seed: str = "") -> str:
    """A token unique to this database, part of every reply's Message-ID; derived from
    the configured seed when there is one, so that a replay writes the same bytes."""
    return fixed_setting(session, "instance", lambda: hashlib.sha256(f"instance:{seed}".encode()).hexdigest()[:12]
                         if seed else secrets.token_hex(6))


QUEUES = {"in": Inbound, "out": Outbound}


def failed_rows(session: Session) -> list[tuple[str, Inbound | Outbound]]:
    """Every mail the worker or the sender gave up on, as ("in" | "out", row)."""
    return [(name, row) for name, model in QUEUES.items()
            for row in session.scalars(select(model).where(model.status == "failed").order_by(model.id))]


def set_status(session: Session, ref: str, status: str) -> str:
    """Requeue (`status="queued"`) or drop a failed mail named `in:ID` or `out:ID`;
    returns what was done, raises ValueError with the reason."""
    name, _, number = ref.partition(":")
    model = QUEUES.get(name)
    if model is None or not number.isdigit():
        raise ValueError(f"{ref!r} names no mail: write in:ID or out:ID, as `pbmserv queue list` shows them")
    row = session.get(model, int(number))
    if row is None or row.status != "failed":
        raise ValueError(f"{ref} is not a failed mail")
    row.status = status
    if isinstance(row, Outbound):
        row.next_attempt_at = None
    return f"{ref} {'queued again' if status == 'queued' else 'dropped'}"

"""The inbound and outbound mail queues: store first, then work, never lose a message."""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime, timedelta

from sqlalchemy import Connection, Row, bindparam, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, sessionmaker

from ..mail.loopguard import clean_text, header_address, parse_bytes
from .db import OnDriver, tables
from .models import Inbound, Outbound
from .repo import fixed_setting

Keys = tuple[str | None, str, str]  # what `message_keys` finds: (bare key, sender's key, sender)
KEY_LENGTH = 998  # of the inbound.message_id column
LONG_FROM = 1000  # characters: a From header longer than any real one is not parsed here


def _written(message, name: str) -> str:
    """The first `name` header as written, unfolded, unparsed: the header parser can
    spend a minute on a hostile megabyte of one."""
    value = next((value for key, value in message.raw_items() if key.lower() == name.lower()), "")
    return clean_text(re.sub(r"[\r\n]", "", str(value))).strip()


def _sender(message) -> str:
    """The From address as a duplicate key knows it: lower case, no white space. A From
    header too long for any real one is known by its hash instead, which is no address."""
    written = _written(message, "From")
    if len(written) > LONG_FROM:
        return "sha256:" + hashlib.sha256(written.encode()).hexdigest()
    return "".join(header_address(message, "From").lower().split())


def _fit(key: str) -> str:
    """`key` if the column holds it, else a hash of it (a cut key could match another)."""
    return key if len(key) <= KEY_LENGTH else "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def message_keys(raw: bytes) -> Keys:
    """The duplicate keys of a mail: (its bare key, its sender's key, its sender).

    A mail is a duplicate of another with the same Message-ID from the same sender
    (the From address, case aside): a forged copy of a player's Message-ID from anyone
    else must not make the player's own mail vanish. The first mail with a Message-ID
    is stored under the Message-ID itself (the bare key: what mail stored before keys
    had senders has, and what the admin's listings show); a later one from another
    sender under "<Message-ID> <sender>". A bare key has no white space (nor the
    "sha256:" of hashed keys), a sender's key always has, so no Message-ID can take
    another sender's key. Without a Message-ID the key is a hash of the bytes, and
    there is no bare key."""
    message = parse_bytes(raw, headers_only=True)
    message_id, sender = _written(message, "Message-ID"), _sender(message)
    if not message_id:
        return None, "sha256:" + hashlib.sha256(raw).hexdigest(), sender
    bare = message_id if len(message_id) <= KEY_LENGTH and not re.search(r"\s|^sha256:", message_id) else None
    return bare, _fit(f"{message_id} {sender}"), sender


# The queue's statements that every mail runs, built once (building and keying a
# statement costs about as much as running it), on the table itself where they load
# no object (the ORM's paths cost as much again).
inbound = Inbound.__table__.c
STORED_UNDER = select(inbound.id, inbound.message_id, inbound.raw).where(  # no expanding IN: it compiles anew
    inbound.message_id.in_([bindparam("bare"), bindparam("own")]))  # each time; a missing bare key is NULL
FIND_STORED = OnDriver(STORED_UNDER)
STORE = {name: OnDriver(insert(Inbound.__table__).values(
    message_id=bindparam("message_id"), raw=bindparam("raw"), envelope_from=bindparam("envelope_from"),
    received_at=bindparam("received_at"), status="queued", error="", attempts=0, masked=False)
    .on_conflict_do_nothing(index_elements=["message_id"]).returning(inbound.id))
    for name, insert in (("postgresql", postgresql.insert), ("sqlite", sqlite.insert))}
QUEUED_INBOUND = OnDriver(select(inbound.id, inbound.attempts).where(inbound.status == "queued").order_by(inbound.id))
DUE = bindparam("now", type_=Outbound.next_attempt_at.type)
outbound = Outbound.__table__.c
QUEUED_OUTBOUND = (select(outbound.id, outbound.recipients, outbound.raw, outbound.draft, outbound.message_id,
                          outbound.created_at)
                   .where(outbound.status == "queued",
                          outbound.next_attempt_at.is_(None) | (outbound.next_attempt_at <= DUE))
                   .order_by(outbound.id).limit(bindparam("limit")).with_for_update(skip_locked=True))


def stored_copy(connection: Connection, raw: bytes, keys: Keys | None = None) -> tuple[int | None, str]:
    """(The id of the mail already stored that `raw` duplicates or None, the key to
    store `raw` under); `keys` are its `message_keys` if known."""
    keys = keys or message_keys(raw)
    return copy_among(FIND_STORED.run(connection, {"bare": keys[0], "own": keys[1]})[0], keys)


def copy_among(rows, keys: Keys) -> tuple[int | None, str]:
    """`stored_copy`'s answer from the rows (id, key, raw) of STORED_UNDER for `keys`."""
    bare, own, sender = keys
    for row_id, key, stored in rows:
        if key == own or _sender(parse_bytes(stored, headers_only=True)) == sender:
            return row_id, own
    return None, bare if bare and not rows else own


def enqueue(sessions: sessionmaker[Session], raw: bytes, received_at: datetime,
            envelope_from: str | None = None) -> tuple[int, bool]:
    """Store a raw mail durably; (its id, False) if the same mail was stored before."""
    return enqueue_many(sessions, [(raw, received_at, envelope_from, None)])[0]


def enqueue_many(sessions: sessionmaker[Session],
                 mails: list[tuple[bytes, datetime, str | None, Keys | None]]) -> list[tuple[int, bool]]:
    """Store raw mails (raw, received_at, envelope_from, its keys if known) durably in
    one transaction, in order; for each (its id, False) if the same mail was stored before.
    On an engine's connection: it writes no object, and a session's transaction cost
    as much again as the statements (70 against 31 us for one SELECT on SQLite)."""
    with sessions.kw["bind"].begin() as connection:
        return [_store(connection, *mail) for mail in mails]


def _store(connection: Connection, raw: bytes, received_at: datetime, envelope_from: str | None,
           keys: Keys | None) -> tuple[int, bool]:
    keys = keys or message_keys(raw)
    store = STORE[connection.dialect.name]
    for _attempt in range(3):  # another connection may store a mail under the same key meanwhile
        existing, key = stored_copy(connection, raw, keys)
        if existing is not None:
            return existing, False
        stored, _count = store.run(connection, dict(message_id=key, raw=raw, envelope_from=envelope_from,
                                                    received_at=received_at))
        if stored:
            return stored[0][0], True
    raise RuntimeError("could not store the mail under a key of its own")  # the SMTP edge answers 451


def queued_inbound(sessions: sessionmaker[Session]) -> list[tuple[int, int]]:
    """Waiting mail in arrival order: (id, times a worker began on it); read on an
    engine's connection, like `enqueue_many`."""
    with sessions.kw["bind"].connect() as connection:
        return [tuple(row) for row in QUEUED_INBOUND.run(connection, {})[0]]


def queued_outbound(session: Session, now: datetime, limit: int) -> list[Row]:
    """Replies due at `now`, oldest first, claimed: on PostgreSQL they stay locked until
    `session`'s transaction ends, and another sender skips them meanwhile. Rows of
    (id, recipients, raw, draft, message_id, created_at), not objects: the sender writes its
    outcomes in statements of its own (`outbound.record_outcomes`)."""
    return tables(session).execute(QUEUED_OUTBOUND, {"now": now, "limit": limit}).all()


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
    if model is None or not number.isdecimal():
        raise ValueError(f"{ref!r} names no mail: write in:ID or out:ID, as `pbmserv queue list` shows them")
    row = session.get(model, int(number))
    if row is None or row.status != "failed":
        raise ValueError(f"{ref} is not a failed mail")
    row.status = status
    if isinstance(row, Outbound):
        row.next_attempt_at = None
    elif status == "queued":
        row.attempts = 0  # a mail set aside gets its tries again
    return f"{ref} {'queued again' if status == 'queued' else 'dropped'}"

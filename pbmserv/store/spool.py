"""The SMTP listener's spool: mail made durable in a SQLite file of its own before its
`250`, then moved into the inbound queue of the game database in batches.

Why apart: SQLite has one write lock per file, and the worker holds the game
database's for the whole of a mail. An insert into the game database's inbound queue
waited for it, so acceptance ran at the worker's pace. The spool's lock is taken only
by the listener's inserts and the mover's deletes, so a `250` never waits for a game.

Exactly once: the mover commits a batch into the inbound queue, then deletes it from
the spool. A crash in between moves the batch again, and the inbound queue's
duplicate keys (`queue.stored_copy`) store none of it twice.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import bindparam, Column, DateTime, Integer, LargeBinary, MetaData, String, Table, delete, func, select
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from .db import make_engine
from .queue import enqueue_many, message_keys, stored_copy

BATCH = 20  # mails moved in one transaction: at most 20 MB at the default size limit

metadata = MetaData()
spooled = Table(
    "spool", metadata,
    Column("id", Integer, primary_key=True),
    Column("key", String, unique=True),  # `message_keys`, for the inbound queue: this mail and sender,
    Column("bare", String),  # the Message-ID alone,
    Column("sender", String),  # and the sender
    Column("raw", LargeBinary, nullable=False),
    Column("envelope_from", String),
    Column("received_at", DateTime, nullable=False),
)

# built once: building and keying a statement costs about as much as running it
KEEP = ("INSERT OR IGNORE INTO spool (key, bare, sender, raw, envelope_from, received_at) "
        "VALUES (:key, :bare, :sender, :raw, :envelope_from, :received_at)")  # on the driver: see `commit_pending`
STORED_AT = "%Y-%m-%d %H:%M:%S.%f"  # a DateTime as SQLAlchemy writes it in SQLite, and reads it back
OLDEST = select(spooled).order_by(spooled.c.id).limit(BATCH)
MOVED = delete(spooled).where(spooled.c.id.in_(bindparam("ids", expanding=True)))


def spool_path(spool: str, database_url: str) -> Path | None:
    """Where the spool lives: `[smtp] spool` if given, else beside a SQLite database
    file (`var/pbmserv.db` → `var/pbmserv-spool.db`). None for PostgreSQL (and an
    in-memory SQLite): its row locks never hold an insert behind the worker, so the
    listener stores into the inbound queue directly."""
    if spool:
        return Path(spool)
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    database = Path(url.database)
    return database.with_name(f"{database.stem}-spool{database.suffix or '.db'}")


@dataclass
class Pending:
    """A mail waiting for the commit that keeps it (`Spool.store`)."""

    values: dict
    kept: bool | None = None  # once committed: False if the spool held it already
    error: Exception | None = None


class Spool:
    def __init__(self, path: Path, database_url: str, busy_timeout: float = 30):
        self.path = path
        self.engine = make_engine(f"sqlite:///{path}", busy_timeout)
        self.reader = make_engine(database_url, busy_timeout, immediate=False)  # duplicates stored before
        metadata.create_all(self.engine)
        self.pending: list[Pending] = []
        self.pending_lock = threading.Lock()
        self.commit_lock = threading.Lock()
        self.connection = None  # the driver's connection that `commit_pending` keeps mail on

    def store(self, raw: bytes, received_at: datetime, envelope_from: str | None = None) -> bool:
        """Keep `raw` durably; False if it was kept or stored before. The game database
        is only read, which in WAL mode never waits for its writer.

        Group commit: mails from several connections that wait at once are kept by one
        transaction (one disk sync), committed by whichever of their threads gets the
        commit lock first; the others find their mail done when they get it."""
        bare, key, sender = keys = message_keys(raw)
        with self.reader.connect() as connection:
            if stored_copy(connection, raw, keys)[0] is not None:
                return False
        mine = Pending(dict(bare=bare, key=key, sender=sender, raw=raw, envelope_from=envelope_from,
                            received_at=received_at.strftime(STORED_AT)))
        with self.pending_lock:
            self.pending.append(mine)
        with self.commit_lock:
            if mine.kept is None and mine.error is None:
                self.commit_pending()
        if mine.error is not None:
            raise mine.error
        return mine.kept

    def commit_pending(self) -> None:
        """Keep every waiting mail in one transaction, on the driver's own connection
        (held by whoever has the commit lock): the engine's transaction and statement
        machinery cost twice the insert and its disk sync (0.7 ms of CPU a mail)."""
        with self.pending_lock:
            batch, self.pending = self.pending, []
        try:
            kept = self._keep([mail.values for mail in batch])
        except Exception as error:  # noqa: BLE001 - each waiting mail is answered 451
            for mail in batch:
                mail.error = error
            if self.connection is not None:  # it may be in any state: the next batch takes a new one
                self.connection.invalidate()
                self.connection = None
            return
        for mail, new in zip(batch, kept):
            mail.kept = new

    def _keep(self, rows: list[dict]) -> list[bool]:
        """Insert `rows` in one transaction; for each, whether it was new."""
        if self.connection is None:
            self.connection = self.engine.raw_connection()
        cursor = self.connection.cursor()
        try:
            cursor.execute("BEGIN IMMEDIATE")
            try:
                kept = [cursor.execute(KEEP, row).rowcount == 1 for row in rows]
                cursor.execute("COMMIT")
            except BaseException:
                cursor.execute("ROLLBACK")
                raise
        finally:
            cursor.close()
        return kept

    def move(self, sessions: sessionmaker[Session]) -> int:
        """Move the oldest spooled mails (a batch) into the inbound queue; how many."""
        with self.engine.connect() as connection:
            rows = connection.execute(OLDEST).all()
        if not rows:
            return 0
        enqueue_many(sessions, [(row.raw, row.received_at, row.envelope_from, (row.bare, row.key, row.sender))
                                for row in rows])
        with self.engine.begin() as connection:
            connection.execute(MOVED, {"ids": [row.id for row in rows]})
        return len(rows)

    def waiting(self) -> int:
        with self.engine.connect() as connection:
            return connection.scalar(select(func.count()).select_from(spooled))

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
        self.engine.dispose()
        self.reader.dispose()

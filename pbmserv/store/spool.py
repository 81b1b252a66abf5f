"""The SMTP listener's spool: mail made durable in a SQLite file of its own before its
`250`, then moved into the inbound queue of the game database in batches.

Why apart: SQLite has one write lock per file, and the worker holds the game
database's for the whole of a mail. An insert into the game database's inbound queue
waited for it, so acceptance ran at the worker's pace. The spool's lock is taken only
by the listener's inserts and the mover's deletes, so a `250` never waits for a game.

Exactly once: the mover commits a batch into the inbound queue, then (about a second
later) deletes it from the spool. A crash in between moves the batch again, and the
inbound queue's duplicate keys (`queue.stored_copy`) store none of it twice.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import bindparam, Column, DateTime, Integer, LargeBinary, MetaData, String, Table, delete, func, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from .db import DriverStatement, in_memory_sqlite, make_engine
from .queue import STORED_UNDER, copy_among, enqueue_many, message_keys

log = logging.getLogger(__name__)

BATCH = 20  # mails moved in one transaction: at most 20 MB at the default size limit
FORGET_SECONDS = 1.0  # moved mail is deleted from the spool at most this often: a delete takes its lock

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
        "VALUES (:key, :bare, :sender, :raw, :envelope_from, :received_at)")  # on the driver: see `_keep`
STORED_AT = "%Y-%m-%d %H:%M:%S.%f"  # a DateTime as SQLAlchemy writes it in SQLite, and reads it back
OLDEST = select(spooled).where(spooled.c.id > bindparam("after")).order_by(spooled.c.id).limit(BATCH)
MOVED = delete(spooled).where(spooled.c.id <= bindparam("moved"))
WAITING = select(func.count()).select_from(spooled).where(spooled.c.id > bindparam("after"))


def spool_path(spool: str, database_url: str) -> Path | None:
    """Where the spool lives: `[smtp] spool` if given, else beside a SQLite database
    file (`var/pbmserv.db` → `var/pbmserv-spool.db`). None for PostgreSQL (and an
    in-memory SQLite): its row locks never hold an insert behind the worker, so the
    listener stores into the inbound queue directly."""
    if spool:
        return Path(spool)
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or in_memory_sqlite(url):
        return None
    database = Path(url.database)
    return database.with_name(f"{database.stem}-spool{database.suffix or '.db'}")


@dataclass
class Waiting:
    """A mail handed to the committer (`Spool.keep`), and where its answer goes."""

    raw: bytes
    received_at: datetime
    envelope_from: str | None
    kept: Future  # True once committed, False if kept or stored before, or the error


class Spool:
    def __init__(self, path: Path, database_url: str, busy_timeout: float = 30):
        self.path = path
        self.engine = make_engine(f"sqlite:///{path}", busy_timeout)
        self.reader = make_engine(database_url, busy_timeout, immediate=False)  # duplicates stored before
        self.stored_under = DriverStatement(STORED_UNDER, self.reader.dialect)
        self.reading = None  # the driver's connection the committer looks them up on, kept open
        metadata.create_all(self.engine)
        self.handed: queue.SimpleQueue[Waiting | None] = queue.SimpleQueue()  # for the committer
        self.committer: threading.Thread | None = None  # started by the first mail
        self.starting = threading.Lock()
        self.connection = None  # the driver's connection the committer keeps mail on
        self.commits = 0  # transactions that kept mail
        self.moved = 0  # the last spool id moved into the inbound queue and not yet deleted here
        self.forgotten_at = 0.0  # when moved mail was last deleted (time.monotonic)

    async def keep(self, raw: bytes, received_at: datetime, envelope_from: str | None = None) -> bool:
        """`store` for the listener's event loop, which goes on meanwhile."""
        return await asyncio.wrap_future(self._hand_over(raw, received_at, envelope_from))

    def store(self, raw: bytes, received_at: datetime, envelope_from: str | None = None) -> bool:
        """Keep `raw` durably; False if it was kept or stored before. The game database
        is only read, which in WAL mode never waits for its writer."""
        return self._hand_over(raw, received_at, envelope_from).result()

    def _hand_over(self, raw: bytes, received_at: datetime, envelope_from: str | None) -> Future:
        with self.starting:
            if self.committer is None:
                self.committer = threading.Thread(target=self._commit_forever, name="pbmserv-spool", daemon=True)
                self.committer.start()
        mail = Waiting(raw, received_at, envelope_from, Future())
        self.handed.put(mail)
        return mail.kept

    def _commit_forever(self) -> None:
        """Group commit, in one thread: every mail waiting when the last commit ended
        is kept by the next one (one disk sync), and its sender answered after it. One
        thread, not one per connection: threads waiting for each other's commit cost
        more interpreter-lock hand-overs than the mail itself."""
        while True:
            batch = [self.handed.get()]
            while not self.handed.empty():
                batch.append(self.handed.get())
            mails = [mail for mail in batch if mail is not None]
            try:
                self._commit(mails)
            except Exception as error:  # noqa: BLE001 - e.g. no game database to read: each is answered 451
                for mail in mails:
                    if not mail.kept.done():
                        mail.kept.set_exception(error)
            if len(mails) < len(batch):  # `close`
                return

    def _commit(self, mails: list[Waiting]) -> None:
        """Keep the mails not stored before, in one transaction; answer each."""
        new: list[tuple[Waiting, dict]] = []
        for mail in mails:
            try:
                bare, key, sender = keys = message_keys(mail.raw)
                if self._stored_before(keys):
                    mail.kept.set_result(False)
                    continue
            except Exception as error:  # noqa: BLE001 - that mail is answered 451
                mail.kept.set_exception(error)
                continue
            new.append((mail, dict(bare=bare, key=key, sender=sender, raw=mail.raw,
                                   envelope_from=mail.envelope_from,
                                   received_at=mail.received_at.strftime(STORED_AT))))
        if not new:
            return
        try:
            kept = self._keep([values for _mail, values in new])
        except Exception as error:  # noqa: BLE001 - each waiting mail is answered 451
            for mail, _values in new:
                mail.kept.set_exception(error)
            if self.connection is not None:  # it may be in any state: the next batch takes a new one
                self.connection.invalidate()
                self.connection = None
            return
        for (mail, _values), was_new in zip(new, kept):
            mail.kept.set_result(was_new)

    def _stored_before(self, keys) -> bool:
        """Whether the inbound queue holds a mail these `message_keys` make a duplicate,
        looked up on the driver's own connection, kept open (the engine's checkout and
        statement cost ten times the look-up). A connection that fails is dropped:
        the next mail takes a new one."""
        if self.reading is None:
            self.reading = self.reader.raw_connection()
        try:
            cursor = self.reading.cursor()
            try:
                rows = self.stored_under.rows(cursor, {"bare": keys[0], "own": keys[1]})
            finally:
                cursor.close()
            self.reading.rollback()  # ends PostgreSQL's read transaction; SQLite's ended with it
        except Exception:
            self.reading.invalidate()
            self.reading = None
            raise
        return copy_among(rows, keys)[0] is not None

    def _keep(self, rows: list[dict]) -> list[bool]:
        """Insert `rows` in one transaction, on the driver's own connection (the
        engine's transaction and statement machinery cost twice the insert and its
        disk sync); for each, whether it was new."""
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
        self.commits += 1
        return kept

    def move(self, sessions: sessionmaker[Session]) -> int:
        """Move the oldest spooled mails not moved yet (a batch) into the inbound
        queue; how many. The moved ones are deleted from the spool later, by
        `forget_moved`, about once a second: each delete takes the spool's write lock
        and syncs the disk, and the listener's commit waited for it at every mail."""
        with self.engine.connect() as connection:
            rows = connection.execute(OLDEST, {"after": self.moved}).all()
        if rows:
            enqueue_many(sessions, [(row.raw, row.received_at, row.envelope_from, (row.bare, row.key, row.sender))
                                    for row in rows])
            self.moved = rows[-1].id
        if time.monotonic() - self.forgotten_at >= FORGET_SECONDS:
            try:
                self.forget_moved()
            except SQLAlchemyError as error:  # the moved mail stays a while longer: moving it is done
                log.warning("could not delete moved mail from the spool yet: %s", error)
        return len(rows)

    def forget_moved(self) -> None:
        """Delete the mail moved so far from the spool. Ids grow with each commit (one
        writer at a time), so every row up to the last moved one is moved; a process
        that dies first leaves them to be moved again, and the inbound queue's
        duplicate keys store none of them twice. Once deleted, counting starts at
        the spool's first row again: SQLite gives an emptied table's ids anew."""
        if self.moved:
            with self.engine.begin() as connection:
                connection.execute(MOVED, {"moved": self.moved})
            self.moved = 0
        self.forgotten_at = time.monotonic()

    def waiting(self) -> int:
        """Mail in the spool not yet moved by this process."""
        with self.engine.connect() as connection:
            return connection.scalar(WAITING, {"after": self.moved})

    def close(self) -> None:
        if self.committer is not None:
            self.handed.put(None)
            self.committer.join()
        for connection in (self.connection, self.reading):
            if connection is not None:
                connection.close()
        self.engine.dispose()
        self.reader.dispose()

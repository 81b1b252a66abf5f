"""The move logs of the boards played lately, kept in memory between mails, so that a
move does not read its board's whole log again.

The database stays the truth. A board's kept log is used only at the exact version of
the board row it was kept at, and it is kept only by a transaction that wrote the
board (so held it, by the row's version check) and then committed; any rollback in a
session forgets all it would have kept. At another version the log is read again: only
its rows after the kept ones when they are the same board's (a log only grows).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import event, insert, select
from sqlalchemy.orm import Session, object_session

from .db import OnDriver, tables
from .models import GameRecord, Move

KEPT_BYTES = 32 << 20  # about this much memory for the logs kept, of the boards played last
ROW_BYTES = 200  # a row's own memory, beside its move's and comment's text


class Logged(NamedTuple):
    """One row of a board's log, as the server reads it (never changed once logged)."""

    number: int
    seat: int
    kind: str
    move: str
    chance: Any
    auto: bool
    comment: str
    created_at: datetime
    inbound_id: int | None


COLUMNS = [getattr(Move, name) for name in Logged._fields]
LOG_MOVE = OnDriver(insert(Move.__table__))  # a row, not an object: the ORM's flush of it cost as much as the board's


class Kept(NamedTuple):
    identity: tuple  # the board's id, seed and creation time: an id used again is another board
    version: int
    moves: tuple[Logged, ...]
    size: int  # its memory, about: ROW_BYTES a row and its text


def size_of(moves: tuple[Logged, ...]) -> int:
    return sum(ROW_BYTES + len(move.move) + len(move.comment) for move in moves)


class KeptLogs(OrderedDict):
    """One database's kept logs by board id, the one played longest ago first, with the
    `size` of them all counted as they change: a commit must not sum thousands of
    boards' sizes, nor a long game's rows, to keep one more row."""

    def __init__(self) -> None:
        super().__init__()
        self.size = 0

    def keep(self, record_id: int, entry: Kept) -> None:
        """Keep `entry` as the board played last; let go the boards played longest ago
        while the logs hold more than KEPT_BYTES."""
        old = self.pop(record_id, None)
        self.size -= old.size if old is not None else 0
        self[record_id] = entry
        self.size += entry.size
        while self.size > KEPT_BYTES and self:
            self.size -= self.popitem(last=False)[1].size


_kept: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # engine -> KeptLogs
_lock = threading.Lock()


def kept_of(session: Session) -> KeptLogs:
    """The logs kept for the database `session` works on (another has other boards)."""
    return kept_of_engine(session.get_bind())


def kept_of_engine(engine) -> KeptLogs:
    with _lock:
        return _kept.setdefault(engine, KeptLogs())


def identity(record: GameRecord) -> tuple:
    return record.id, record.seed, record.created_at


def log_of(record: GameRecord) -> list[Logged]:
    """The board's log as its session sees it, oldest first."""
    session = object_session(record)
    if session is None:  # a board read by a session closed since: the rows it loaded
        return [Logged(*(getattr(move, name) for name in Logged._fields)) for move in record.moves]
    seen = session.info.setdefault("logs", {})
    if record.id in seen:
        return seen[record.id]
    kept = kept_of(session).get(record.id)
    if kept is not None and kept.identity != identity(record):
        kept = None
    if kept is not None and kept.version == record.version:
        moves = list(kept.moves)
    else:
        moves = list(kept.moves) if kept is not None else []
        moves += [Logged(*row) for row in session.execute(
            select(*COLUMNS).where(Move.game_id == record.id, Move.number > len(moves)).order_by(Move.number))]
    seen[record.id] = moves
    return moves


def append(record: GameRecord, **values: Any) -> Logged:
    """Log an action on the board: a row in the session, and in the log it sees."""
    moves = log_of(record)
    logged = Logged(number=len(moves) + 1, **values)
    session = object_session(record)
    LOG_MOVE.run(tables(session), dict(game_id=record.id, **logged._asdict()))
    if "moves" in record.__dict__:  # loaded: read again when next asked for, with this row
        session.expire(record, ["moves"])
    moves.append(logged)
    session.info.setdefault("logs written", {})[record.id] = record
    return logged


@event.listens_for(Session, "after_commit")
def keep(session: Session) -> None:
    if session.in_nested_transaction():  # a savepoint released: the transaction goes on
        return
    written = session.info.pop("logs written", {})
    seen = session.info.pop("logs", {})
    if not written:
        return
    kept = kept_of(session)
    with _lock:
        for record_id, record in written.items():
            version = record.__dict__.get("version")  # as committed; None if expired since (unknown)
            if version is None or record_id not in seen:
                continue
            moves, before = tuple(seen[record_id]), kept.get(record_id)
            if before is not None and before.identity == identity(record) and len(before.moves) <= len(moves):
                # the same board's log, which only grows: only its new rows are counted
                size = before.size + size_of(moves[len(before.moves):])
            else:
                size = size_of(moves)
            kept.keep(record_id, Kept(identity(record), version, moves, size))


@event.listens_for(Session, "after_soft_rollback")
def forget(session: Session, _transaction) -> None:
    session.info.pop("logs written", None)
    session.info.pop("logs", None)

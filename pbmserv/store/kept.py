"""The boards a worker played lately, kept in memory between its transactions on
SQLite, so that the next mail on a board does not load it, its seats and its players
again (a fifth of a move's work in the worker).

The database stays the truth. Triggers count every row written to the tables a
board's objects come from (`change_count`), by anyone. The worker reads the count
after its last write, just before its commit and still holding SQLite's write lock,
and again in the statement that claims the next transaction's mails: only if the two
are equal has nobody written any of those rows in between, and only then does it use
the objects its session holds as they are. Otherwise, and after any rollback or any
deletion, it expires them all and loads again what it needs. On PostgreSQL such a
count would be one row that every server writes with every move: there nothing is
kept, and boards are loaded as before.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import event, inspect
from sqlalchemy.orm import Session, sessionmaker

from .db import on_driver
from .models import UNCOUNTED, GameRecord

KEEP = 256  # boards kept, the last played (a few kB each)
INFO = "kept boards"  # the session.info key of its (game type, board) -> GameRecord
COUNT = "SELECT count FROM change_count WHERE id = 1"


class KeptBoards:
    """A worker's one long-lived session, and the boards it keeps (SQLite only)."""

    def __init__(self, sessions: sessionmaker[Session]):
        self.session = sessions()
        self.boards: OrderedDict[tuple[str, int], GameRecord] = OrderedDict()
        self.session.info[INFO] = self.boards
        self.count: int | None = None  # the count the session's objects are current at; None: unknown
        self.noted: int | None = None  # the count at this transaction's end, kept once it commits
        self.uncounted: list = []  # objects of the uncounted tables that came into the session
        self.deleted = False  # whether this transaction deleted a row
        event.listen(self.session, "persistent_to_deleted", self._deleted)
        for arrival in ("loaded_as_persistent", "pending_to_persistent", "detached_to_persistent"):
            event.listen(self.session, arrival, self._arrived)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """The session in a transaction of its own, committed at the end; a failure
        anywhere (the commit's too) forgets everything kept."""
        session = self.session
        if session.in_transaction():  # an attribute read outside the worker's transactions
            session.rollback()
        try:
            with session.begin():
                yield session
                self._note(session)
        except BaseException:
            self.forget()
            raise
        self.count, self.noted = self.noted, None
        while len(self.boards) > KEEP:
            self.boards.popitem(last=False)

    def check(self, count: int | None) -> None:
        """At the start of a transaction, given the count as it began (None: not
        read): the session's objects stay as they are if nobody wrote since this
        worker's last commit, else they are expired. Objects of the uncounted tables
        (a mail claimed before, a rate event) are let go either way: nobody counts
        their changes, and a mail played again is claimed as a new object."""
        for instance in self.uncounted:
            if inspect(instance).session is self.session:
                self.session.expunge(instance)
        self.uncounted.clear()
        if count is None or count != self.count:
            self.session.expire_all()
            self.boards.clear()
        self.count = None  # until this transaction's commit

    def forget(self) -> None:
        """Nothing kept is current (the rollback expired it all; the next `check`
        expires whatever came since)."""
        self.count = self.noted = None
        self.deleted = False
        self.boards.clear()

    def _note(self, session: Session) -> None:
        """The count after this transaction's writes, which the next one compares."""
        session.flush()
        if self.deleted:  # a deleted row may sit in a kept collection: the next check expires all
            self.noted, self.deleted = None, False
            self.boards.clear()
            return
        [(self.noted,)], _count = on_driver(session.connection(), COUNT)

    def _deleted(self, _session: Session, _instance) -> None:
        self.deleted = True

    def _arrived(self, _session: Session, instance) -> None:
        if type(instance).__tablename__ in UNCOUNTED:
            self.uncounted.append(instance)


def kept_board(session: Session, game_type: str, board: int) -> GameRecord | None:
    """The board as this worker's session holds it, if it is kept and current."""
    boards = session.info.get(INFO)
    record = boards.get((game_type, board)) if boards else None
    if record is None:
        return None
    state = inspect(record)
    if state.deleted or state.was_deleted or state.session is not session:
        del boards[(game_type, board)]
        return None
    boards.move_to_end((game_type, board))
    return record


def keep_board(session: Session, record: GameRecord | None) -> None:
    """Keep a board just loaded, if this session keeps boards."""
    boards = session.info.get(INFO)
    if boards is not None and record is not None:
        boards[(record.game_type, record.board)] = record

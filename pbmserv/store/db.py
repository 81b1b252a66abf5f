"""Opening the database: engine settings, durable SQLite, and migrations at start-up."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
from pathlib import Path

from alembic import command
from alembic.config import Config as AlembicConfig
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from ..resources import resource_dir


class DatabaseError(Exception):
    """The database cannot be opened or migrated; the message says which and why."""


def make_engine(url: str, busy_timeout: float = 30, durable: bool = True, immediate: bool = True) -> Engine:
    """An engine for `url`; SQLite files get WAL, synchronous=FULL and foreign keys,
    and wait up to `busy_timeout` seconds for a lock. `durable=False` (a replay's
    throw-away database) skips the disk syncs: nobody waits for an acknowledgement.
    `immediate=False` is for reading only: its SQLite transactions take no write lock,
    so in WAL mode they never wait for a writer."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        scheme = url.partition(":")[0][:40]  # the rest may hold a password
        raise DatabaseError(f"the database URL ({scheme}:...) cannot be read (try sqlite:///var/pbmserv.db)") from None
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            try:
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise DatabaseError(f"cannot create the folder of database {parsed.database}: {error.strerror}") from None
        # only a writer takes turns (`_sqlite_begin`): a reader needs no lock file
        factory = {"factory": TurnTakingConnection} if immediate else {}
        engine = create_engine(parsed, connect_args={"timeout": busy_timeout, **factory})
        event.listen(engine, "connect", _sqlite_pragmas if durable else _sqlite_pragmas_fast)
        if immediate:
            event.listen(engine, "begin", _sqlite_begin)
        return savepoints_as_written(engine)
    try:
        return savepoints_as_written(create_engine(parsed, pool_pre_ping=True))
    except (ImportError, ArgumentError) as error:
        raise DatabaseError(f"cannot use database {parsed.render_as_string()}: {error}") from None


def savepoints_as_written(engine: Engine) -> Engine:
    """`engine` with its dialect's savepoint hooks sending the SQL their clauses compile
    to, as written. Every command runs in a savepoint, and the clauses are compiled
    anew each time (a savepoint's name changes, so no statement cache keeps them):
    a savepoint of the session took 205 us on SQLite, 155 this way (2026-12-04); on
    SQLite they are sent on the driver (`on_driver`), 45 us less each (2026-12-07)."""
    dialect = engine.dialect
    name_of = dialect.identifier_preparer.quote
    send = on_driver if dialect.name == "sqlite" else Connection.exec_driver_sql
    dialect.do_savepoint = lambda connection, name: send(connection, f"SAVEPOINT {name_of(name)}")
    dialect.do_release_savepoint = lambda connection, name: send(connection, f"RELEASE SAVEPOINT {name_of(name)}")
    dialect.do_rollback_to_savepoint = (
        lambda connection, name: send(connection, f"ROLLBACK TO SAVEPOINT {name_of(name)}"))
    return engine


def in_memory_sqlite(url: URL) -> bool:
    """A SQLite database that lives in one connection's memory: no other connection,
    thread or process sees it."""
    return url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    # Python's sqlite3 would begin transactions itself, and only before DML: DDL (a
    # migration) and SAVEPOINTs would then run outside any transaction. SQLAlchemy's
    # pysqlite recipe: the driver does nothing, and every transaction sends BEGIN.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_pragmas_fast(dbapi_connection, record) -> None:
    _sqlite_pragmas(dbapi_connection, record)
    dbapi_connection.execute("PRAGMA synchronous=OFF")


def _sqlite_begin(connection) -> None:
    # IMMEDIATE takes the write lock at once (waiting up to busy_timeout for it), so a
    # transaction that read first never fails later when it comes to write.
    connection.connection.dbapi_connection.take_turn()
    on_driver(connection, "BEGIN IMMEDIATE")


class TurnTakingConnection(sqlite3.Connection):
    """A SQLite connection whose write transactions wait for their turn on a lock file
    beside the database (`flock`), which the kernel hands to a waiter the moment a
    transaction ends, in this process or another.

    SQLite's own lock is waited for by sleeping between tries, longer the longer the
    wait (1, 2, 5, ... 100 ms): while the worker played group after group, each
    leaving the lock free for a few microseconds, the sender's process waited up to
    three seconds to mark its replies sent, and sent nothing meanwhile. A transaction
    holds its turn no longer than it holds SQLite's lock; where the lock file cannot
    be opened (a database another user created), SQLite's own wait decides, as before."""

    held = threading.local()  # `.turns`: the lock files this thread holds a turn on, never waited for twice

    def __init__(self, database, *args, **kwargs):
        super().__init__(database, *args, **kwargs)
        self.turn_file: int | None = None
        self.in_turn: set | None = None  # while in a turn, the set of turns of the thread that took it
        path = os.fsdecode(database)
        if path and path != ":memory:" and not path.startswith("file:"):
            try:
                self.turn_file = os.open(path + "-turn", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o660)
                status = os.fstat(self.turn_file)
                self.turn_key = (status.st_dev, status.st_ino)
            except OSError:
                self.turn_file = None

    def take_turn(self) -> None:
        turns = self.turns()
        if self.turn_file is None or self.in_turn is not None or self.turn_key in turns:
            return
        fcntl.flock(self.turn_file, fcntl.LOCK_EX)
        self.in_turn = turns  # the taking thread's: let go there even if ended from another
        turns.add(self.turn_key)

    def end_turn(self) -> None:
        if self.in_turn is not None:
            self.in_turn.discard(self.turn_key)
            self.in_turn = None
            fcntl.flock(self.turn_file, fcntl.LOCK_UN)

    @classmethod
    def turns(cls) -> set:
        if not hasattr(cls.held, "turns"):
            cls.held.turns = set()
        return cls.held.turns

    def commit(self) -> None:
        try:
            super().commit()
        finally:
            self.end_turn()

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self.end_turn()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.end_turn()
            if self.turn_file is not None:
                os.close(self.turn_file)
                self.turn_file = None


def alembic_config(engine: Engine) -> AlembicConfig:
    config = AlembicConfig()
    config.set_main_option("script_location", str(resource_dir("migrations")))
    config.attributes["engine"] = engine
    return config


def migrate(engine: Engine) -> None:
    """Bring the schema up to date (a new database is created by the same path)."""
    try:
        command.upgrade(alembic_config(engine), "head")
    except SQLAlchemyError as error:
        raise DatabaseError(f"cannot open database {engine.url.render_as_string()}: {error.__class__.__name__}: {error.args[0] if error.args else error}") from None


def open_database(url: str, busy_timeout: float = 30) -> sessionmaker[Session]:
    """Engine + migrations + a session factory: everything the server needs of SQL."""
    engine = make_engine(url, busy_timeout)
    migrate(engine)
    return sessionmaker(engine, expire_on_commit=False)


class DriverStatement:
    """A statement built on tables, compiled once for one dialect and run on a cursor
    of the driver's own: for a statement at every mail where the engine's execution
    path costs many times the work (120 against 10 us a SELECT on SQLite, 2026-12-04).
    Its parameters are converted as the engine would (a JSON column's value encoded, a
    DateTime written as SQLite stores it), and so are the columns of its rows (a
    DateTime read back, a Boolean from SQLite's 0 and 1): the same values as the
    engine's rows, as plain tuples. An expanding `IN` is written out for each call's
    list (`construct_expanded_state`, 7 us)."""

    def __init__(self, statement, dialect, column_keys: list[str] | None = None):
        self.compiled = statement.compile(dialect=dialect, column_keys=column_keys)
        self.sql = str(self.compiled)
        self.names = self.compiled.positiontup  # None for a driver that takes them by name
        self.expanding = bool(self.compiled.post_compile_params)
        self.conversions = [(name, convert) for bind, name in self.compiled.bind_names.items()
                            if (convert := bind.type.dialect_impl(dialect).bind_processor(dialect))]
        self.readings = [(index, convert) for index, column in enumerate(statement.exported_columns)
                         if (convert := column.type.dialect_impl(dialect).result_processor(dialect, None))]

    def bound(self, params: dict) -> tuple[str, list | dict]:
        """The SQL for `params` and its parameters as the driver takes them."""
        if self.expanding:
            state = self.compiled.construct_expanded_state(params)
            values = state.parameters
            conversions = [(name, convert) for name, convert in state.processors.items() if name in values]
            sql, names = state.statement, state.positiontup
        else:
            values = self.compiled.construct_params(params)
            conversions, sql, names = self.conversions, self.sql, self.names
        for name, convert in conversions:
            values[name] = convert(values[name])
        return sql, values if names is None else [values[name] for name in names]

    def read(self, rows: list) -> list:
        """The driver's rows with their columns converted."""
        if not self.readings:
            return rows
        converted = []
        for row in rows:
            row = list(row)
            for index, convert in self.readings:
                row[index] = convert(row[index])
            converted.append(tuple(row))
        return converted

    def rows(self, cursor, params: dict) -> list:
        cursor.execute(*self.bound(params))
        return self.read(cursor.fetchall())


class OnDriver:
    """A statement every mail runs, sent on SQLite on the driver's connection under
    the session's (a `DriverStatement` for each set of parameter names): the engine's
    execution path added 20-30 us to the 4 a SELECT takes on the driver (2026-12-07).
    On PostgreSQL it goes through the engine, which also knows when psycopg's
    connection is lost. `connection` is a session's (`tables(session)` flushes the
    session's changes first, `session.connection()` does not), or an engine's for a
    read outside any transaction.

    `run` gives (the rows, [] for a statement that returns none; the rows changed, by
    a statement run once). The driver's errors are raised as the engine's
    (`IntegrityError`, `OperationalError`: a lost race is tried again as before), and
    the engine's `before_cursor_execute` listeners see the statement."""

    def __init__(self, statement):
        self.statement = statement
        self.compiled: dict[tuple[str, ...], DriverStatement] = {}

    def run(self, connection: Connection, params: dict | list[dict]) -> tuple[list, int]:
        dialect = connection.dialect
        if dialect.name != "sqlite":
            result = connection.execute(self.statement, params)
            return (result.all() if result.returns_rows else []), result.rowcount
        many = isinstance(params, list)
        keys = tuple(params[0] if many else params)
        driver = self.compiled.get(keys)
        if driver is None:
            driver = self.compiled[keys] = DriverStatement(self.statement, dialect, list(keys))
        if many:
            rows, count = on_driver(connection, driver.sql, [driver.bound(each)[1] for each in params], True)
        else:
            rows, count = on_driver(connection, *driver.bound(params))
        return driver.read(rows), count


def on_driver(connection: Connection, sql: str, values=(), many: bool = False) -> tuple[list, int]:
    """`OnDriver.run` for SQL as the driver takes it, with its parameters converted."""
    dbapi = connection.dialect.loaded_dbapi
    cursor = connection.connection.dbapi_connection.cursor()
    try:
        if connection.dispatch.before_cursor_execute:
            connection.dispatch.before_cursor_execute(connection, cursor, sql, values, None, many)
        if many:
            cursor.executemany(sql, values)
            return [], cursor.rowcount
        cursor.execute(sql, values)
        return cursor.fetchall(), cursor.rowcount
    except dbapi.Error as error:
        raise DBAPIError.instance(sql, values, error, dbapi.Error) from error
    finally:
        cursor.close()


def tables(session: Session) -> Connection:
    """`session`'s connection, for a statement built on tables (it loads and writes no
    object): the session's pending changes are flushed first, as `session.execute`
    does, and the statement then costs half of the ORM's execution path (98 against
    204 us a SELECT on this machine, 2026-12-04)."""
    if session.autoflush:
        session.flush()
    return session.connection()

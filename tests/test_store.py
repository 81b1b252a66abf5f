"""The database: migrations build exactly the models' schema, SQLite is durable, and
the stored game state is always the replay of the move log."""

from datetime import datetime

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

import pytest
from sqlalchemy import bindparam, event, insert, inspect, select, text, update
from sqlalchemy.exc import IntegrityError

from pbmserv.play import engine_of, replay
from pbmserv.store.db import OnDriver, alembic_config, make_engine, migrate, open_database, tables
from pbmserv.store.models import Base, GameRecord, Outbound


def schema_differences(engine) -> list:
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return compare_metadata(context, Base.metadata)


def test_upgrading_an_empty_database_gives_the_models_schema(serve_url):
    engine = make_engine(serve_url)
    migrate(engine)
    assert schema_differences(engine) == []
    assert set(inspect(engine).get_table_names()) == set(Base.metadata.tables) | {"alembic_version"}
    engine.dispose()


def test_every_migration_goes_down_and_up_again(serve_url):
    """On both databases: down to nothing, up again to exactly the models' schema."""
    engine = make_engine(serve_url)
    config = alembic_config(engine)
    command.upgrade(config, "head")
    command.downgrade(config, "base")
    assert inspect(engine).get_table_names() == ["alembic_version"]
    command.upgrade(config, "head")
    migrate(engine)  # idempotent on an up-to-date database
    assert schema_differences(engine) == []
    engine.dispose()


def test_sqlite_is_in_wal_mode_with_full_sync(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'sub' / 'dir' / 'durable.db'}")
    with engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(text("PRAGMA synchronous")).scalar() == 2  # FULL
        assert connection.execute(text("PRAGMA foreign_keys")).scalar() == 1


def test_stored_state_is_the_replay_of_the_log_and_version_counts_writes(server):
    server.signup("alice", "bob")
    server.send("alice@example.org", "superwari challenge alice alice-pw bob")
    for userid, move in [("alice", "c"), ("bob", "a"), ("alice", "d"), ("bob", "b")]:
        server.send(f"{userid}@example.org", f"superwari move 101 {userid} {userid}-pw {move}")
    with server.sessions() as session:
        record = session.scalar(select(GameRecord))
        assert [m.move for m in record.moves] == ["c", "a", "d", "b"]
        assert [m.number for m in record.moves] == [1, 2, 3, 4]
        game_state = replay(record)
        assert engine_of(record).serialise(game_state) == record.state
        assert record.version == 5  # created, then one write per move


def outbound_row(message_id: str, draft) -> dict:
    return dict(inbound_id=None, message_id=message_id, recipients=["a@example.org", "b@example.org"],
                raw=b"\x00bytes\xff", draft=draft, status="queued", attempts=0, error="",
                created_at=datetime(2026, 12, 7, 10, 30, 1, 123456))


def test_a_statement_on_the_driver_writes_what_the_engine_writes(serve_url):
    """`OnDriver` converts its parameters as the engine would: the same JSON, the same
    stored date, the same bytes, row for row, read back as stored (on PostgreSQL it
    is the engine)."""
    sessions = open_database(serve_url)
    on_driver = OnDriver(insert(Outbound.__table__))
    rows = [outbound_row("<one@x>", {"body": "é", "html": None}), outbound_row("<two@x>", None)]
    with sessions.begin() as session:
        session.execute(insert(Outbound.__table__), [dict(row, message_id="engine" + row["message_id"])
                                                     for row in rows])
        assert on_driver.run(tables(session), rows)[0] == []
    with sessions() as session:
        stored = session.execute(text("SELECT message_id, recipients, raw, draft, created_at, "
                                      "next_attempt_at FROM outbound ORDER BY id")).all()
    by_engine, by_driver = stored[:2], stored[2:]
    assert [row[1:] for row in by_driver] == [row[1:] for row in by_engine]
    assert [row[0] for row in by_driver] == ["<one@x>", "<two@x>"]
    assert by_driver[1][3] in ("null", None)  # as the engine writes a JSON None: checked equal above
    sessions.kw["bind"].dispose()


def test_a_statement_on_the_driver_reads_what_the_engine_reads(serve_url):
    """An expanding IN is written out for each call's list, and the rows' columns come
    back converted as the engine converts them (a DateTime, a Boolean, JSON), whether
    read in a transaction or on an engine's connection outside one."""
    sessions = open_database(serve_url)
    returned = (Outbound.id, Outbound.created_at, Outbound.draft, Outbound.raw, Outbound.next_attempt_at)
    wanted = bindparam("wanted", expanding=True)
    retry = (update(Outbound.__table__).where(Outbound.message_id.in_(wanted))
             .values(attempts=Outbound.attempts + 1).returning(*returned))
    read = select(*returned, select(Outbound.id).where(Outbound.attempts > 0).exists()).order_by(Outbound.id)
    with sessions.begin() as session:
        session.execute(insert(Outbound.__table__), [outbound_row(f"<{n}@x>", {"n": n}) for n in range(3)])
    for ids in (["<0@x>", "<2@x>"], ["<1@x>"], []):
        with sessions.begin() as session:
            by_driver = OnDriver(retry).run(tables(session), {"wanted": ids})
            session.rollback()
        with sessions.begin() as session:
            by_engine = tables(session).execute(retry, {"wanted": ids}).all()
        assert [tuple(row) for row in by_driver[0]] == [tuple(row) for row in by_engine]
        assert by_driver[1] == len(ids)
    with sessions.kw["bind"].connect() as connection:
        by_driver = [tuple(row) for row in OnDriver(read).run(connection, {})[0]]
        by_engine = [tuple(row) for row in connection.execute(read)]
    assert by_driver == by_engine
    assert by_driver[0][1:] == (datetime(2026, 12, 7, 10, 30, 1, 123456), {"n": 0}, b"\x00bytes\xff", None, True)
    sessions.kw["bind"].dispose()


def test_a_statement_on_the_driver_returns_rows_counts_and_the_engines_errors(serve_url):
    """Rows and changed-row counts as the engine gives them (a board's save checks its
    count); a duplicate key raises the engine's IntegrityError, which the worker
    retries, and the engine's listeners see the statement (the statement count)."""
    sessions = open_database(serve_url)
    store, find = OnDriver(insert(Outbound.__table__)), OnDriver(
        select(Outbound.id, Outbound.message_id).where(Outbound.message_id == bindparam("wanted")))
    retry = OnDriver(update(Outbound.__table__).where(Outbound.message_id == bindparam("wanted"))
                     .values(attempts=Outbound.attempts + 1))
    seen = []
    engine = sessions.kw["bind"]

    def note(_connection, _cursor, statement, *_rest):
        seen.append(statement.split()[0])
    event.listen(engine, "before_cursor_execute", note)
    with sessions.begin() as session:
        store.run(tables(session), outbound_row("<one@x>", None))
        (found,), count = find.run(tables(session), {"wanted": "<one@x>"})
        assert tuple(found)[1] == "<one@x>"
        assert retry.run(tables(session), {"wanted": "<one@x>"})[1] == 1
        assert retry.run(tables(session), {"wanted": "<nobody@x>"}) == ([], 0)
        with pytest.raises(IntegrityError), session.begin_nested():
            store.run(tables(session), outbound_row("<one@x>", None))
    event.remove(engine, "before_cursor_execute", note)
    assert [word for word in seen if word in ("INSERT", "SELECT", "UPDATE")] == [
        "INSERT", "SELECT", "UPDATE", "UPDATE", "INSERT"]
    with sessions() as session:
        assert session.scalars(select(Outbound.attempts)).all() == [1]
    engine.dispose()

"""The database: migrations build exactly the models' schema, SQLite is durable, and
the stored game state is always the replay of the move log."""

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, select, text

from pbmserv.play import engine_of, replay
from pbmserv.store.db import alembic_config, make_engine, migrate
from pbmserv.store.models import Base, GameRecord


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

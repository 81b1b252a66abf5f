"""Write transactions on a SQLite database take turns through its `-turn` lock file
(`db.TurnTakingConnection`): held from BEGIN to COMMIT or ROLLBACK, handed to a waiting
process as soon as it is let go, never waited for twice by one thread, and not needed
where the file cannot be made."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import time
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from pbmserv.store.db import make_engine


def turn_is_free(database: Path) -> bool:
    """Whether another process could take the turn now (a probe of our own, let go at once)."""
    probe = os.open(f"{database}-turn", os.O_RDWR)
    try:
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(probe, fcntl.LOCK_UN)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(probe)


def make_table(database: Path):
    engine = make_engine(f"sqlite:///{database}", busy_timeout=1)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE IF NOT EXISTS t (n INTEGER)"))
    return engine


def test_a_write_transaction_holds_the_turn_from_begin_to_its_end(tmp_path):
    database = tmp_path / "game.db"
    engine = make_table(database)
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO t VALUES (1)"))
        assert not turn_is_free(database)
    assert turn_is_free(database)
    with pytest.raises(ZeroDivisionError):
        with engine.begin() as connection:
            connection.execute(text("INSERT INTO t VALUES (2)"))
            assert not turn_is_free(database)
            1 / 0
    assert turn_is_free(database)  # a rollback lets it go too
    with engine.connect() as connection:
        assert connection.execute(text("SELECT n FROM t")).scalars().all() == [1]


def test_a_second_transaction_of_the_same_thread_fails_as_before_instead_of_hanging(tmp_path):
    """Waiting for a turn this thread holds would wait for ever: it is SQLite's
    busy timeout (1 s here) that answers, as it did before turns."""
    engine = make_table(tmp_path / "game.db")
    started = time.monotonic()
    with engine.begin() as outer:
        outer.execute(text("INSERT INTO t VALUES (1)"))
        with pytest.raises(OperationalError, match="locked"):
            with engine.begin() as inner:
                inner.execute(text("INSERT INTO t VALUES (2)"))
    assert time.monotonic() - started < 10


def test_without_a_lock_file_writes_go_on_under_sqlites_own_lock(tmp_path):
    database = tmp_path / "game.db"
    (tmp_path / "game.db-turn").mkdir()  # a lock file that cannot be opened
    engine = make_table(database)
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO t VALUES (1)"))
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM t")).scalar() == 1


def busy_writer(database: str, seconds: float, ready) -> None:
    """Write transactions back to back for `seconds`, as the worker plays group after group."""
    engine = make_engine(f"sqlite:///{database}")
    ready.set()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with engine.begin() as connection:
            connection.execute(text("INSERT INTO t VALUES (0)"))
            time.sleep(0.005)


def test_a_writer_in_another_process_gets_its_turn_while_a_busy_one_goes_on(tmp_path):
    """SQLite's own wait sleeps ever longer between tries, and missed the moments a
    busy writer let go: the sender waited seconds behind the worker. With turns, the
    second writer is in long before the busy one stops."""
    database = tmp_path / "game.db"
    engine = make_table(database)
    context = multiprocessing.get_context("fork")
    ready = context.Event()
    busy = context.Process(target=busy_writer, args=(str(database), 4.0, ready))
    busy.start()
    try:
        assert ready.wait(10)
        time.sleep(0.5)  # well into its run
        with engine.begin() as connection:
            connection.execute(text("INSERT INTO t VALUES (1)"))
        assert busy.is_alive(), "the second writer waited for the busy one to stop"
    finally:
        busy.join(20)
    assert busy.exitcode == 0

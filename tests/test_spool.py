"""The listener's spool (store/spool.py): durable before the 250, moved into the inbound
queue exactly once, duplicates answered as such, and no wait on the game database."""

from __future__ import annotations

import sqlite3
import time
from datetime import datetime
from pathlib import Path

from sqlalchemy import select

from conftest import make_mail
from pbmserv.store.db import open_database
from pbmserv.store.models import Inbound
from pbmserv.store.queue import enqueue, enqueue_many
from pbmserv.store.spool import Spool, spool_path, spooled as spool_table

NOW = datetime(2026, 11, 1, 12, 0)


def mail(n: int, sender: str = "alice@example.org", message_id: str | None = "auto") -> bytes:
    return make_mail(sender, f"help {n}", date=NOW, message_id=f"<m{n}@example.org>" if message_id == "auto" else message_id)


def setup(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'pbmserv.db'}"
    sessions = open_database(url)
    return sessions, Spool(spool_path("", url), url, busy_timeout=1)


def inbound(sessions) -> list[tuple[str, bytes]]:
    with sessions() as session:
        return [tuple(row) for row in session.execute(select(Inbound.message_id, Inbound.raw).order_by(Inbound.id))]


def test_where_the_spool_lives():
    assert spool_path("", "sqlite:///var/pbmserv.db") == Path("var/pbmserv-spool.db")
    assert spool_path("", "sqlite:////srv/games/state") == Path("/srv/games/state-spool.db")
    assert spool_path("/var/spool/pbm.db", "postgresql+psycopg://db/pbm") == Path("/var/spool/pbm.db")
    assert spool_path("", "postgresql+psycopg://db/pbm") is None  # stored straight into the inbound queue
    assert spool_path("", "sqlite://") is None


def test_spooled_mail_moves_in_order_and_once(tmp_path):
    sessions, spooled = setup(tmp_path)
    raws = [mail(n) for n in range(25)]  # more than one batch
    assert [spooled.store(raw, NOW, "alice@example.org") for raw in raws] == [True] * 25
    assert spooled.store(raws[3], NOW) is False  # the MTA sent it again: still spooled once
    assert spooled.waiting() == 25 and inbound(sessions) == []
    assert spooled.move(sessions) == 20 and spooled.move(sessions) == 5 and spooled.move(sessions) == 0
    assert [raw for _key, raw in inbound(sessions)] == raws
    assert spooled.store(raws[7], NOW) is False  # and once moved, the queue knows it
    assert spooled.waiting() == 0


def test_a_crash_between_the_queue_commit_and_the_spool_delete_stores_nothing_twice(tmp_path):
    sessions, spooled = setup(tmp_path)
    raws = [mail(n) for n in range(3)] + [mail(9, message_id=None)]  # keyed by a hash of its bytes
    for raw in raws:
        spooled.store(raw, NOW)
    enqueue_many(sessions, [(raw, NOW, None, None) for raw in raws])  # the move's commit, then the crash
    assert spooled.move(sessions) == 4  # the next run moves the batch again
    assert [raw for _key, raw in inbound(sessions)] == raws
    assert spooled.waiting() == 0


def test_the_same_message_id_from_another_sender_is_not_a_duplicate(tmp_path):
    sessions, spooled = setup(tmp_path)
    assert spooled.store(mail(1), NOW) is True
    assert spooled.store(mail(1, sender="mallory@example.org"), NOW) is True  # a forged copy hides nothing
    spooled.move(sessions)
    assert [key for key, _raw in inbound(sessions)] == ["<m1@example.org>", "<m1@example.org> mallory@example.org"]


def test_a_locked_game_database_does_not_slow_the_spool(tmp_path):
    sessions, spooled = setup(tmp_path)
    enqueue(sessions, mail(0), NOW)  # the schema is there
    lock = sqlite3.connect(tmp_path / "pbmserv.db", isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")  # the worker in the middle of a long mail
    try:
        started = time.monotonic()
        assert spooled.store(mail(1), NOW) is True
        assert spooled.store(mail(0), NOW) is False  # read while the writer holds its lock
        assert time.monotonic() - started < 0.5
    finally:
        lock.execute("ROLLBACK")
        lock.close()


def test_a_megabyte_of_one_header_is_spooled_by_its_hash(tmp_path):
    sessions, spooled = setup(tmp_path)
    raw = b"From: " + b"a" * 1_000_000 + b"@example.org\r\nMessage-ID: <big@x>\r\n\r\nhelp\r\n"
    started = time.process_time()
    assert spooled.store(raw, NOW) is True and spooled.store(raw, NOW) is False
    assert spooled.move(sessions) == 1
    assert time.process_time() - started < 2.0
    [(key, stored)] = inbound(sessions)
    assert key == "<big@x>" and stored == raw
    with spooled.engine.connect() as connection:
        assert connection.execute(select(spool_table.c.id)).all() == []


def test_mail_from_many_connections_at_once_is_kept_once_each(tmp_path):
    """Group commit: sixteen threads at once, two of them with the same mail."""
    from concurrent.futures import ThreadPoolExecutor

    sessions, spooled = setup(tmp_path)
    raws = [mail(n) for n in range(15)] + [mail(3)]
    with ThreadPoolExecutor(16) as pool:
        kept = list(pool.map(lambda raw: spooled.store(raw, NOW), raws))
    assert sorted(kept) == [False] + [True] * 15
    assert spooled.waiting() == 15 and spooled.commits < 15
    spooled.move(sessions)
    assert sorted(raw for _key, raw in inbound(sessions)) == sorted(raws[:15])


def test_a_spool_that_cannot_be_written_fails_every_waiting_mail(tmp_path):
    _sessions, spooled = setup(tmp_path)
    lock = sqlite3.connect(spooled.path, isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    try:
        for n in range(2):
            try:
                spooled.store(mail(n), NOW)
            except Exception as error:  # noqa: BLE001 - the SMTP edge answers 451
                assert "locked" in str(error)
            else:
                raise AssertionError("a mail was reported kept in a locked spool")
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert spooled.store(mail(0), NOW) is True and spooled.waiting() == 1


def test_a_failed_duplicate_look_up_fails_that_mail_only_and_the_next_one_reads_again(tmp_path):
    """The look-up runs on a connection kept open between mails: one that fails is
    dropped (its mail answered 451), and the next mail is looked up on a new one."""
    sessions, spooled = setup(tmp_path)
    enqueue(sessions, mail(0), NOW)
    assert spooled.store(mail(1), NOW) is True  # the connection is open now
    game = sqlite3.connect(tmp_path / "pbmserv.db", isolation_level=None)
    game.execute("ALTER TABLE inbound RENAME TO inbound_away")
    try:
        spooled.store(mail(2), NOW)
    except Exception as error:  # noqa: BLE001 - the SMTP edge answers 451
        assert "inbound" in str(error)
    else:
        raise AssertionError("a mail was reported kept though its duplicates could not be looked up")
    finally:
        game.execute("ALTER TABLE inbound_away RENAME TO inbound")
        game.close()
    assert spooled.reading is None
    assert spooled.store(mail(0), NOW) is False  # read again: stored before
    assert spooled.store(mail(2), NOW) is True and spooled.waiting() == 2
    spooled.close()

"""Several workers on one PostgreSQL database: each stored mail is taken by one of
them (`SELECT ... FOR UPDATE SKIP LOCKED`), never by two. Runs when TEST_DATABASE_URL
names a PostgreSQL server; SQLite has a single writer, so there is nothing to race."""

from __future__ import annotations

import threading
from datetime import datetime

import pytest
from sqlalchemy import func, select

from conftest import POSTGRESQL, Databases, make_mail
from pbmserv.config import load_config
from pbmserv.store.db import open_database
from pbmserv.store.models import Inbound, Outbound
from pbmserv.store.queue import enqueue, queued_inbound
from pbmserv import worker as worker_module

pytestmark = pytest.mark.skipif(not POSTGRESQL, reason="no PostgreSQL: set TEST_DATABASE_URL to run these")


def signups(url: str, count: int):
    """A new database with `count` signups queued; the config to work them with."""
    config = load_config(environ={}).with_overrides(
        database={"url": url}, security={"password_cost": "fast"}, server={"seed": "claims"},
        outbound={"transport": "memory"})
    clock = datetime(2026, 11, 1, 12, 0)
    sessions = open_database(url)
    for n in range(count):
        enqueue(sessions, make_mail(f"u{n}@example.org", f"signup u{n} pw-{n}", date=clock,
                                    message_id=f"<claim{n}@example.org>"), clock)
    return config, sessions


def test_two_workers_take_each_mail_once(tmp_path, monkeypatch):
    databases = Databases("postgresql")
    try:
        url = databases.new()
        config, sessions = signups(url, 40)
        active: set[int] = set()  # the mails some worker is handling right now
        overlaps: list[int] = []
        lock = threading.Lock()
        real = worker_module.Handler.handle

        def watched(self):
            with lock:
                if self.row.id in active:
                    overlaps.append(self.row.id)
                active.add(self.row.id)
            try:
                return real(self)
            finally:
                with lock:
                    active.discard(self.row.id)
        monkeypatch.setattr(worker_module.Handler, "handle", watched)
        workers = [worker_module.Worker(open_database(url), config) for _ in range(2)]
        threads = [threading.Thread(target=w.run_pending) for w in workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        with sessions() as session:
            statuses = session.scalars(select(Inbound.status)).all()
            errors = [e.strip().splitlines()[-1] for e in session.scalars(
                select(Inbound.error).where(Inbound.status == "failed"))]
            replies = session.scalar(select(func.count(Outbound.id)))
        assert errors == []
        assert statuses == ["done"] * 40
        assert replies == 40
        assert overlaps == []  # never in two workers' hands at once
        for w in workers:
            w.sessions.kw["bind"].dispose()
        sessions.kw["bind"].dispose()
    finally:
        databases.drop_all()


def test_a_worker_plays_the_mails_it_started_even_if_another_locks_them_for_a_moment():
    """Another worker's start can lock a mail for a moment after this worker started it
    (its statement began before this start's commit). This worker's claim must wait for
    that moment, not skip the mails: skipped, they would stay queued, started and never
    played."""
    databases = Databases("postgresql")
    try:
        url = databases.new()
        config, sessions = signups(url, worker_module.GROUP)
        worker = worker_module.Worker(open_database(url), config)
        ids = [mail_id for mail_id, _starts in queued_inbound(sessions)]
        assert worker.start(ids, 0) == ids
        locked, release = threading.Event(), threading.Event()

        def lock_a_moment():
            with sessions.begin() as session:
                session.execute(select(Inbound.id).where(Inbound.id.in_(ids)).with_for_update())
                locked.set()
                release.wait(10)
        other = threading.Thread(target=lock_a_moment)
        other.start()
        assert locked.wait(10)
        threading.Timer(0.3, release.set).start()
        worker.play_together(ids)
        other.join(10)
        with sessions() as session:
            assert session.execute(select(Inbound.status, Inbound.attempts)).all() == [("done", 1)] * len(ids)
            assert session.scalar(select(func.count(Outbound.id))) == len(ids)
        worker.sessions.kw["bind"].dispose()
        sessions.kw["bind"].dispose()
    finally:
        databases.drop_all()

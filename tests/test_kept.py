"""The boards a worker keeps between mails on SQLite (`store/kept.py`): used only while
the count of written rows shows that nobody else wrote, and forgotten after a change
made anywhere else, a rollback or a deletion."""

from __future__ import annotations

import pytest
from sqlalchemy import select, text

from pbmserv.store.models import UNCOUNTED, Address, Base, Setting, User
from test_statements import ALICE, BOB, queue, started, statements_of


@pytest.fixture
def sqlite_server(make_server, backend):
    if backend != "sqlite":
        pytest.skip("boards are kept on SQLite only")
    return make_server()


def count(server) -> int:
    with server.sessions() as session:
        return session.execute(text("SELECT count FROM change_count")).scalar_one()


def test_every_table_but_the_queues_has_its_rows_counted(sqlite_server):
    """A table without its three triggers (a batch migration that copied it forgets
    them) would let a worker keep a board someone else changed."""
    with sqlite_server.sessions() as session:
        triggers = set(session.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger'")).scalars())
    counted = set(Base.metadata.tables) - UNCOUNTED
    assert triggers == {f"count_{table}_{operation}" for table in counted for operation in ("insert", "update", "delete")}


def test_a_write_anywhere_counts_and_the_queues_do_not(sqlite_server):
    before = count(sqlite_server)
    with sqlite_server.sessions.begin() as session:
        session.add(Setting(name="a", value="1"))
    with sqlite_server.sessions.begin() as session:
        session.execute(text("UPDATE settings SET value = '2' WHERE name = 'a'"))
        session.execute(text("DELETE FROM settings WHERE name = 'a'"))
    assert count(sqlite_server) == before + 3
    queue(sqlite_server, ALICE, "help")
    sqlite_server.worker.start([1], 0)  # a queue's write: no count
    assert count(sqlite_server) == before + 3


def test_the_next_move_on_a_kept_board_does_not_load_it(sqlite_server):
    started(sqlite_server)
    queue(sqlite_server, BOB, "superwari move 101 bob bob-pw a")
    statements = statements_of(sqlite_server, sqlite_server.worker.run_pending)
    assert not [s for s in statements if s.startswith("SELECT") and "FROM games" in s], statements
    assert list(sqlite_server.worker.kept.boards) == [("superwari", 101)]
    replies = sqlite_server.collect(lambda: None)
    assert all("#2 a" in r.body and "Next move: #3" in r.body for r in replies)


def test_a_change_made_by_another_session_is_read(sqlite_server):
    """bob's address changed by an admin's session between two moves: the board mail
    goes to the new one, not to the address the kept board's player had."""
    started(sqlite_server)
    with sqlite_server.sessions.begin() as session:
        address = session.scalar(select(Address).where(Address.address_key == BOB))
        address.address = address.address_key = "bob@new.example.org"
    replies = sqlite_server.send("bob@new.example.org", "superwari move 101 bob bob-pw a")
    assert sorted(r.to[0] for r in replies) == [ALICE, "bob@new.example.org"]


def test_a_password_changed_by_another_session_is_checked(sqlite_server):
    """The kept player's password hash is not used once another session wrote it."""
    from pbmserv.passwords import hash_password

    started(sqlite_server)
    with sqlite_server.sessions.begin() as session:
        bob = session.scalar(select(User).where(User.userid_key == "bob"))
        bob.password_hash = hash_password("new-pw", "fast")
    [reply] = sqlite_server.send(BOB, "superwari move 101 bob bob-pw a")
    assert "Wrong password for bob." in reply.body
    replies = sqlite_server.send(BOB, "superwari move 101 bob new-pw a")
    assert len(replies) == 2 and all("#2 a" in r.body for r in replies)


def test_a_transaction_that_fails_or_deletes_forgets_what_it_kept(sqlite_server):
    started(sqlite_server)
    kept = sqlite_server.worker.kept
    assert kept.boards and kept.count == count(sqlite_server)
    with pytest.raises(RuntimeError):
        with kept.transaction():
            raise RuntimeError("the disk is full")
    assert not kept.boards and kept.count is None
    sqlite_server.send(BOB, "superwari move 101 bob bob-pw a")
    assert kept.boards
    with kept.transaction() as session:
        session.add(Setting(name="gone", value="soon"))
    with kept.transaction() as session:
        session.delete(session.get(Setting, "gone"))
    assert not kept.boards and kept.count is None


def test_at_most_KEEP_boards_are_kept(sqlite_server, monkeypatch):
    from pbmserv.store import kept

    monkeypatch.setattr(kept, "KEEP", 1)
    started(sqlite_server)
    sqlite_server.signup("carol", "dave")
    sqlite_server.send("carol@example.org", "superwari challenge carol carol-pw dave")
    sqlite_server.send("carol@example.org", "superwari move 102 carol carol-pw c")
    assert list(sqlite_server.worker.kept.boards) == [("superwari", 102)]
    replies = sqlite_server.send(BOB, "superwari move 101 bob bob-pw a")
    assert len(replies) == 2 and all("#1 c   #2 a" in r.body for r in replies)


def test_postgresql_keeps_nothing(make_server, backend):
    if backend != "postgresql":
        pytest.skip("a PostgreSQL worker's own")
    assert make_server().worker.kept is None

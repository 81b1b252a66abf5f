"""What a move mail costs the database (issue 20): at most 8 SQL statements through the
worker, counted here so that it stays that way; and the move logs the worker keeps in
memory between mails (`store/movelog.py`) never show a move the database does not hold.

Transaction control (BEGIN, SAVEPOINT, RELEASE) is not counted: it does no work of its
own. Everything else from reading the queue to the replies in the outbound queue is."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from sqlalchemy import event, func, select, text
from sqlalchemy.orm.exc import StaleDataError

from conftest import Server, make_mail
from pbmserv.store.models import Move
from pbmserv.store.queue import enqueue
from pbmserv.store.repo import find_game, save_board

ALICE, BOB = "alice@example.org", "bob@example.org"
MOST = 8
CONTROL = re.compile(r"\s*(BEGIN|SAVEPOINT|RELEASE SAVEPOINT|ROLLBACK TO SAVEPOINT)\b", re.IGNORECASE)


def statements_of(server: Server, action) -> list[str]:
    """The statements `action` sends to the server's database, transaction control aside."""
    engine = server.sessions.kw["bind"]
    seen: list[str] = []

    def note(_connection, _cursor, statement, _parameters, _context, _executemany):
        if not CONTROL.match(statement):
            seen.append(" ".join(statement.split()))
    event.listen(engine, "before_cursor_execute", note)
    try:
        action()
    finally:
        event.remove(engine, "before_cursor_execute", note)
    return seen


def queue(server: Server, sender: str, subject: str, body: str = "", headers: dict | None = None) -> None:
    server.count += 1
    server.clock += timedelta(minutes=1)
    enqueue(server.sessions, make_mail(sender, subject, body, date=server.clock,
                                       message_id=f"<count{server.count}@example.org>", headers=headers), server.clock)


def started(server: Server) -> list:
    """alice and bob on Super-Wari board 101, alice's first move played."""
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    return server.send(ALICE, "superwari move 101 alice alice-pw c")


def test_a_move_mail_issues_at_most_8_statements_from_the_queue_to_the_replies(server):
    started(server)
    for sender, userid, move, number in ((BOB, "bob", "a", 2), (ALICE, "alice", "d", 3)):
        queue(server, sender, f"superwari move 101 {userid} {userid}-pw {move}")
        statements = statements_of(server, server.worker.run_pending)
        assert len(statements) <= MOST, "\n".join(statements)
        replies = server.collect(lambda: None)
        assert sorted(r.to[0] for r in replies) == [ALICE, BOB]
        assert all(f"#{number} {move}" in r.body and f"Next move: #{number + 1}" in r.body for r in replies)
    with server.sessions() as session:
        assert session.scalar(select(func.count(Move.id))) == 3


def test_a_move_by_reply_to_play_issues_at_most_8_statements(server):
    board_mails = started(server)
    [to_bob] = [r for r in board_mails if r.to == [BOB]]
    queue(server, BOB, "Re: " + to_bob.subject, "a\n", headers={"To": to_bob.message["Reply-To"]})
    statements = statements_of(server, server.worker.run_pending)
    assert len(statements) <= MOST, "\n".join(statements)
    replies = server.collect(lambda: None)
    assert sorted(r.to[0] for r in replies) == [ALICE, BOB] and all("#2 a" in r.body for r in replies)


def test_a_wrong_password_is_still_counted_and_limited(server):
    """The count of wrong passwords comes with the sender's other facts now: it still
    locks after the limit, and a right password is refused while it holds."""
    started(server)
    limit = server.config.limits.wrong_passwords_per_hour
    for _ in range(limit):  # the last one also mails bob a way to lift the lock
        replies = server.send(BOB, "superwari move 101 bob wrong a")
        assert any("Wrong password for bob." in r.body for r in replies)
    [reply] = server.send(BOB, "superwari move 101 bob bob-pw a")
    assert "Too many wrong passwords were sent from bob@example.org in the last hour." in reply.body


def test_moves_played_through_another_server_on_the_same_database_are_read(server, tmp_path):
    """Two workers with engines (and kept logs) of their own take turns on one board:
    each reads the moves the other logged, so every board mail counts right."""
    started(server)
    other = Server(tmp_path, database={"url": server.config.database.url})  # its own engine
    other.count = 1000  # Message-IDs of its own
    try:
        for number, (playing, sender, userid, move) in enumerate(
                [(other, BOB, "bob", "a"), (server, ALICE, "alice", "d"), (other, BOB, "bob", "b"),
                 (server, ALICE, "alice", "e")], start=2):
            playing.clock = max(server.clock, other.clock)
            replies = playing.send(sender, f"superwari move 101 {userid} {userid}-pw {move} #{number}")
            assert len(replies) == 2, [r.body for r in replies]
            assert all(f"#{number} {move}" in r.body and f"Next move: #{number + 1}" in r.body for r in replies)
    finally:
        other.sessions.kw["bind"].dispose()


def test_a_board_is_saved_in_one_update_of_its_changed_columns_and_stays_saved(server):
    """`save_board` writes what changed, bumps the version as the ORM would, and leaves
    nothing for the commit to write again."""
    started(server)
    with server.sessions.begin() as session:
        record = find_game(session, "superwari", 101)
        version, record.result, record.nag_after = record.version, "a note", record.nag_after
        [statement] = statements_of(server, lambda: save_board(session, record))
        assert re.sub(r"%\(\w+\)s(::\w+)?", "?", statement) == \
            "UPDATE games SET result=?, version=? WHERE games.id = ? AND games.version = ?"
        assert record.version == version + 1 and record not in session.dirty
        assert statements_of(server, session.commit) == []
    with server.sessions() as session:
        assert session.execute(text("SELECT result, version FROM games")).one() == ("a note", version + 1)


def test_a_board_changed_since_it_was_read_is_not_overwritten(server):
    """Another worker's change in between (its version moved on) raises StaleDataError,
    which the worker answers by playing the mail again, and writes nothing."""
    started(server)
    with server.sessions() as session:
        record = find_game(session, "superwari", 101)
        session.connection().execute(text("UPDATE games SET version = version + 1, result = 'theirs'"))
        record.result = "mine"
        with pytest.raises(StaleDataError):
            save_board(session, record)
        assert session.connection().execute(text("SELECT result FROM games")).scalar() == "theirs"
        session.rollback()


def test_a_move_whose_mail_failed_is_not_remembered(server, monkeypatch):
    """A transaction that logs a move and then fails is rolled back whole: the next
    mail on the board finds the move not played, and plays it once."""
    started(server)
    import pbmserv.worker as worker

    real = worker.queue_mails

    def fail(*args, **kwargs):
        raise RuntimeError("the disk is full")
    monkeypatch.setattr(worker, "queue_mails", fail)
    assert server.send(BOB, "superwari move 101 bob bob-pw a") == []
    monkeypatch.setattr(worker, "queue_mails", real)
    replies = server.send(BOB, "superwari move 101 bob bob-pw a #2")
    assert len(replies) == 2 and all("#2 a" in r.body and "Next move: #3" in r.body for r in replies)
    with server.sessions() as session:
        assert session.scalars(select(Move.number).order_by(Move.number)).all() == [1, 2]


def test_a_later_failing_command_of_the_same_mail_keeps_the_move_before_it(server):
    """Each command line runs in a savepoint: a failing second line undoes only itself,
    and the move of the first stands, in the log and in what the next mail reads."""
    started(server)
    replies = server.send(BOB, "several", "superwari move 101 bob bob-pw a\n"
                                          "superwari move 101 bob bob-pw b\n")
    [results] = [r for r in replies if r.subject == "pbmserv results"]
    assert "Move a played" in results.body and "It is not bob's turn" in results.body
    replies = server.send(ALICE, "superwari move 101 alice alice-pw d #3")
    assert len(replies) == 2 and all("#3 d" in r.body and "Next move: #4" in r.body for r in replies)


@pytest.mark.parametrize("kind", ["queue"])
def test_a_board_with_a_queued_move_loads_it_and_plays_it(server, kind):
    """A board whose count says it has pending moves reads them (the counts kept by
    `models.count_collections`), and a queued move still plays when its turn comes."""
    started(server)
    server.send(ALICE, f"superwari {kind} 101 alice alice-pw d")
    replies = server.send(BOB, "superwari move 101 bob bob-pw a")
    assert any("#3 d (auto)" in r.body for r in replies), [r.body for r in replies]


def test_kept_logs_stay_within_their_memory_and_a_board_let_go_is_read_again(server, monkeypatch):
    """Past KEPT_BYTES the boards played longest ago are let go; their next move reads
    the log again, whole, and counts right."""
    from pbmserv.store import movelog

    monkeypatch.setattr(movelog, "KEPT_BYTES", 3 * movelog.ROW_BYTES)
    started(server)
    server.signup("carol", "dave")
    server.send("carol@example.org", "superwari challenge carol carol-pw dave")
    server.send("carol@example.org", "superwari move 102 carol carol-pw c")
    server.send("dave@example.org", "superwari move 102 dave dave-pw a")  # 102 now holds the memory
    kept = movelog.kept_of_engine(server.sessions.kw["bind"])
    assert list(kept) == [2] and kept[2].size <= movelog.KEPT_BYTES
    replies = server.send(BOB, "superwari move 101 bob bob-pw a #2")
    assert len(replies) == 2 and all("#1 c   #2 a" in r.body and "Next move: #3" in r.body for r in replies)


def test_kept_logs_count_their_size_row_by_row_as_they_grow(server):
    """Each commit counts only the rows it added to a board's kept log, and the logs'
    total only as it changes: both must stay what counting everything again gives."""
    from pbmserv.store import movelog

    started(server)
    server.signup("carol", "dave")
    server.send("carol@example.org", "superwari challenge carol carol-pw dave")
    for sender, userid, move in ((BOB, "bob", "a"), ("carol@example.org", "carol", "c"),
                                 (ALICE, "alice", "d"), ("dave@example.org", "dave", "a")):
        board = 101 if userid in ("alice", "bob") else 102
        replies = server.send(sender, "a move", f"superwari move {board} {userid} {userid}-pw {move}\n"
                                                f"A comment, kept with the move: {userid * 10}\n")
        assert len(replies) == 2, [r.body for r in replies]
    kept = movelog.kept_of_engine(server.sessions.kw["bind"])
    assert sorted(len(entry.moves) for entry in kept.values()) == [2, 3]
    assert [entry.size for entry in kept.values()] == [movelog.size_of(entry.moves) for entry in kept.values()]
    assert kept.size == sum(movelog.size_of(entry.moves) for entry in kept.values())


def test_kept_logs_let_go_of_the_boards_played_longest_ago_past_their_memory(monkeypatch):
    from pbmserv.store import movelog

    monkeypatch.setattr(movelog, "KEPT_BYTES", 100)
    kept = movelog.KeptLogs()

    def entry(size):
        return movelog.Kept((), 1, (), size)
    for board, size in ((1, 30), (2, 30), (3, 30), (1, 35)):  # 1 played again: last now
        kept.keep(board, entry(size))
    assert (list(kept), kept.size) == ([2, 3, 1], 95)
    kept.keep(4, entry(40))  # 135: 2 and then 3 go
    assert (list(kept), kept.size) == ([1, 4], 75)
    kept.keep(5, entry(101))  # more than all the memory: nothing stays
    assert (list(kept), kept.size) == ([], 0)

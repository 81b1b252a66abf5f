"""Issue 17, a newcomer's first hour: a vacation's days left, a queued move after an
accepted undo, and table talk by Survive players who are out."""

from __future__ import annotations

from datetime import timedelta

import pytest
from conftest import body_of

from pbmserv.store.models import PendingMove
from pbmserv.store.repo import find_game

ALICE = "alice@example.org"
BOB = "bob@example.org"
CAROL = "carol@example.org"
MASK = "********"
MINUTE = timedelta(minutes=1)


def error(problem: str, instead: str, quoted: str) -> str:
    return f"{problem}\n{instead}\n\nYour message:\n> Subject: {quoted}\n"


# --- vacation: the days a message says are left are the days granted ---------------


def test_a_minute_away_shows_the_days_that_can_still_be_taken(server):
    """'30 of 30 days left' and then '30 days' refused was a contradiction."""
    server.signup("alice", "bob")
    server.one(BOB, "vacation bob bob-pw 1")
    server.wait(MINUTE)
    assert body_of(server.one(BOB, "vacation bob bob-pw off")).split("\n")[1] == (
        "Vacation left: 29.9 of 30 days in 365 days.")
    assert body_of(server.one(BOB, "vacation bob bob-pw 30")) == error(
        "bob has 29.9 days of vacation left: 0.1 days of 30 days were taken in the last 365 days.",
        "Send: vacation bob PASSWORD DAYS with at most the days left, or 'on'.", f"vacation bob {MASK} 30")
    assert body_of(server.one(BOB, "vacation bob bob-pw 29")).split("\n")[1] == (
        "Vacation left: 0.9 of 30 days in 365 days.")


# --- a queued move is played when an accepted undo gives its player the turn ----------


@pytest.fixture
def game(server):
    """alice against bob on Super-Wari board 101, after alice c and bob c."""
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(ALICE, "superwari move 101 alice alice-pw c")
    server.send(BOB, "superwari move 101 bob bob-pw c")
    return server


def log_and_queue(server) -> tuple[list[tuple], list[tuple]]:
    with server.sessions() as session:
        record = find_game(session, "superwari", 101)
        return ([(m.number, m.seat, m.kind, m.move, m.auto) for m in record.moves],
                [(p.seat, p.kind, p.move) for p in record.pending])


def note_of(reply) -> str:
    return body_of(reply).split("\n")[3]


def test_an_accepted_undo_plays_the_queued_move_of_the_player_it_gives_the_turn(game):
    """It fired a turn later, after bob had moved by hand: two moves of his in a row."""
    game.one(BOB, "superwari queue 101 bob bob-pw b")
    game.send(BOB, "superwari move 101 bob bob-pw undo")
    replies = game.send(ALICE, "superwari move 101 alice alice-pw accept")
    assert [(r.subject, r.to, note_of(r)) for r in replies] == [
        ("Super-Wari Board 101 bob", [ALICE], "alice accepted: the moves from move 2 on were taken back."),
        ("Super-Wari Board 101 bob", [BOB], "alice accepted: the moves from move 2 on were taken back."),
        ("Super-Wari Board 101 alice", [ALICE], "bob's queued move was played (auto)."),
        ("Super-Wari Board 101 alice", [BOB], "bob's queued move was played (auto)."),
    ]
    assert log_and_queue(game) == ([(1, 0, "move", "c", False), (2, 1, "move", "c", False),
                                    (3, 1, "undo", "2", False), (4, 1, "move", "b", True)], [])


def test_a_move_by_hand_clears_the_players_queued_move(game):
    """A queue left over while its player is to move (a turn given by a path that
    plays no queued move) must not fire at the player's next turn."""
    game.send(ALICE, "superwari move 101 alice alice-pw a")
    with game.sessions.begin() as session:
        record = find_game(session, "superwari", 101)
        record.pending.append(PendingMove(seat=1, kind="queue", move="b", comment="", created_at=game.clock))
    game.send(BOB, "superwari move 101 bob bob-pw d")
    assert log_and_queue(game)[1] == []
    game.send(ALICE, "superwari move 101 alice alice-pw b")
    assert log_and_queue(game)[0][-2:] == [(4, 1, "move", "d", False), (5, 0, "move", "b", False)]

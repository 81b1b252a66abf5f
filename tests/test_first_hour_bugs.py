"""Issue 17, a newcomer's first hour: a vacation's days left, a queued move after an
accepted undo, and table talk by Survive players who are out."""

from __future__ import annotations

from datetime import timedelta

import pytest
from test_votes import game  # noqa: F401 - alice against bob after c, c
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
        "bob has 29.9 days of vacation left: 0.1 days of 30 days were taken in the last\n365 days.",
        "Send: vacation bob PASSWORD DAYS with at most the days left, or 'on'.", f"vacation bob {MASK} 30")
    # the first line, filled to 78 columns, takes two lines
    assert body_of(server.one(BOB, "vacation bob bob-pw 29")).split("\n")[2] == (
        "Vacation left: 0.9 of 30 days in 365 days.")


# --- a queued move is played when an accepted undo gives its player the turn ----------


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


# --- Survive: players who are out may still talk at the table -----------------------


@pytest.fixture
def survive(server):
    """alice, bob and carol at Survive board 101, in round 1's search phase; bob has
    resigned and is out."""
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "survive challenge alice alice-pw bob carol -deadline=1d")
    server.send(BOB, "survive resign 101 bob bob-pw")
    return server


def problem(reply) -> list[str]:
    """The error's subject, what was wrong and what to send instead."""
    return [reply.subject] + body_of(reply).split("\n")[:2]


def test_out_of_the_game_in_the_search_phase_is_said_by_phase_not_turn(survive):
    """Survive has no turns: 'It is not bob's turn' was wrong twice."""
    for command in ("move", "submit"):
        assert problem(survive.one(BOB, f"survive {command} 101 bob bob-pw say good luck")) == [
            "Survive Board 101 Error",
            "bob is out of the game: nothing to do in the search phase.",
            "Players who are out may still say and tell in the negotiation phase."]


def negotiating(server) -> None:
    for user in ("alice", "carol"):
        server.send(f"{user}@example.org", f"survive move 101 {user} {user}-pw search")


def test_a_resigned_player_may_say_and_tell_in_the_negotiation_phase(survive):
    negotiating(survive)
    said = survive.send(BOB, "survive move 101 bob bob-pw say good luck")
    assert sorted(r.to[0] for r in said) == [ALICE, BOB, CAROL]
    assert not [r.subject for r in said if "Error" in r.subject]
    told = survive.send(BOB, "survive move 101 bob bob-pw tell alice watch carol")
    assert not [r.subject for r in told if "Error" in r.subject]
    told = survive.send(ALICE, "survive move 101 alice alice-pw tell bob thanks")
    assert not [r.subject for r in told if "Error" in r.subject]
    with survive.sessions() as session:
        assert [m.move for m in find_game(session, "survive", 101).moves][-3:] == [
            "say good luck", "tell {seat0} watch {seat2}", "tell {seat1} thanks"]


def test_a_resigned_player_may_talk_but_not_play(survive):
    negotiating(survive)
    reply = survive.one(BOB, "survive move 101 bob bob-pw done")
    assert [reply.subject] + body_of(reply).split("\n")[:3] == [
        "Survive Board 101 Error",
        "Move done is not legal on board 101: you are out of the game: you may still",
        "say and tell.",
        "Send instead: survive move 101 bob PASSWORD MOVE"]

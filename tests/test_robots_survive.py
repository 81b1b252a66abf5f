"""The Survive robots (pbmserv/robots/survive.py): legal, repeatable, blind to what
their seat cannot see, never stuck, and strong where it is obvious."""

from __future__ import annotations

import random
from collections import Counter
from functools import cache

import pytest

from pbmserv.games import games
from pbmserv.games.survive import COUNTS, ORDER
from pbmserv.robots import choose
from pbmserv.robots import survive as robots

GAME = games()["survive"]
PARAMS = {p.name: p.default for p in GAME.params}
LEVELS = range(4)
BOUND = 3000  # actions: far more than a game of robots takes


def new_game(players: int, rng: random.Random):
    return GAME.setup(players, PARAMS, GAME.initial_chance(players, PARAMS, rng))


def act(state, seat: int, move: str, rng: random.Random) -> None:
    verdict = GAME.check(state, seat, move)
    assert verdict.ok, (seat, move, verdict.error)
    GAME.apply(state, seat, verdict.move, GAME.draw(state, seat, verdict.move, rng))


def play(levels: tuple[int, ...], seed: int, seen=None):
    """A whole game, the seat the board waits for acting as the bench does (the
    lowest first); `seen(state)` is called before each move. Deadlines never fire:
    the robots end every phase themselves."""
    rng = random.Random(seed)
    state = new_game(len(levels), rng)
    for _ in range(BOUND):
        if GAME.result(state) is not None:
            return state
        waiting = sorted(GAME.waiting_for(state))
        assert waiting, "nobody acts: the game would hang until a deadline"
        if seen:
            seen(state)
        seat = waiting[0]
        act(state, seat, choose(GAME, state, seat, levels[seat], random.Random(rng.random())), rng)
    raise AssertionError(f"{levels}: not over after {BOUND} actions")


@cache
def positions() -> tuple:
    """Serialised states of mixed games, taken every few moves: search and negotiation
    phases, offers made by robots, weapon chains pending."""
    found = []
    for seed, levels in enumerate([(0, 2, 3), (3, 2, 0), (2, 3, 1), (1, 0, 2, 3), (3, 3)]):
        moments = []
        play(levels, seed, lambda state: moments.append(GAME.serialise(state)))
        found += moments[2::3]
    return tuple(found)


def test_positions_cover_every_kind_of_moment():
    states = [GAME.restore(data) for data in positions()]
    assert any(s.phase == "search" for s in states)
    assert any(s.phase == "negotiation" and s.plays for s in states)
    assert any(o["status"] == "open" for s in states for o in s.offers)


def test_every_level_plays_a_legal_move_and_never_talks():
    for data in positions():
        state = GAME.restore(data)
        for seat in sorted(GAME.waiting_for(state)):
            for level in LEVELS:
                move = choose(GAME, state, seat, level, random.Random(seat))
                assert GAME.check(state, seat, move).ok, (level, move, GAME.check(state, seat, move).error)
                assert move.split()[0] not in ("say", "tell", "give", "undone"), move


def test_the_same_seed_gives_the_same_move():
    for data in positions()[::4]:
        state = GAME.restore(data)
        for seat in sorted(GAME.waiting_for(state)):
            for level in LEVELS:
                assert choose(GAME, state, seat, level, random.Random(5)) == \
                    choose(GAME, GAME.restore(data), seat, level, random.Random(5))


def test_a_robot_sees_only_its_own_view():
    """Another deal of the cards its seat cannot see gives the same move."""
    deals = random.Random(11)
    for data in positions():
        state = GAME.restore(data)
        for seat in sorted(GAME.waiting_for(state)):
            other = GAME.resample_hidden(state, seat, random.Random(deals.random()))
            for level in LEVELS:
                key = deals.random()
                assert choose(GAME, state, seat, level, random.Random(key)) == \
                    choose(GAME, other, seat, level, random.Random(key)), (level, seat)


def test_resampling_depends_on_the_view_and_the_rng_alone():
    for data in positions()[::5]:
        state = GAME.restore(data)
        for seat in range(state.players):
            other = GAME.resample_hidden(state, seat, random.Random(1))
            assert GAME.serialise(GAME.resample_hidden(state, seat, random.Random(2))) == \
                GAME.serialise(GAME.resample_hidden(other, seat, random.Random(2)))


@pytest.mark.parametrize("levels", [(0, 0, 0), (1, 1, 1), (2, 2, 2), (3, 3, 3), (2, 3), (0, 1, 2, 3, 3)])
def test_robots_always_finish_the_game(levels):
    play(levels, seed=len(levels) + sum(levels))


def negotiating(players: int = 3, **fields):
    """A round-2 negotiation phase with the given fields set, the other cards in the deck."""
    state = new_game(players, random.Random(0))
    state.round, state.phase = 2, "negotiation"
    state.hands = [[] for _ in range(players)]
    for name, value in fields.items():
        setattr(state, name, value)
    rest = Counter(COUNTS)
    for pile in state.hands + state.stock:
        rest.subtract(pile)
    rest["B"] -= sum(state.beasts)
    state.deck = [card for card in ORDER for _ in range(rest[card])]
    random.Random(0).shuffle(state.deck)
    return state


@pytest.mark.parametrize("level", [2, 3])
def test_the_strong_levels_take_the_last_life_of_the_last_rival(level):
    state = negotiating(2, hands=[["F", "W", "S", "X"], ["F", "W", "S"]], stock=[[], ["F", "W", "S"]], lives=[3, 1])
    assert choose(GAME, state, 0, level, random.Random(1)) == "weapon life {seat1}"


@pytest.mark.parametrize("level", [1, 2, 3])
def test_a_robot_with_one_life_kills_the_beast_before_it(level):
    state = negotiating(3, hands=[["F", "W", "S", "X", "T"], [], []], beasts=[1, 0, 0], lives=[1, 3, 3])
    assert choose(GAME, state, 0, level, random.Random(1)) == "weapon beast {seat0}"


@pytest.mark.parametrize("level", [2, 3])
def test_the_strong_levels_counter_a_shot_at_their_last_life(level):
    state = negotiating(3, hands=[["F", "W", "S", "X", "T"], ["X"], []], lives=[1, 3, 3])
    act(state, 1, "weapon life {seat0}", random.Random(0))
    assert choose(GAME, state, 0, level, random.Random(1)) == "weapon counter 1"


def test_an_offer_of_trash_for_a_needed_card_is_refused_and_a_fair_one_taken():
    state = negotiating(3, hands=[["T"], ["F", "F", "S"], []], stock=[[], ["F", "W"], []])
    act(state, 0, "offer {seat1} give=T get=F", random.Random(0))
    for level in (1, 2, 3):
        assert choose(GAME, state, 1, level, random.Random(1)) == "reject 1"
    state = negotiating(3, hands=[["W"], ["F", "F", "S"], []], stock=[["F", "F", "S"], ["F", "S"], []])
    act(state, 0, "offer {seat1} give=W get=F", random.Random(0))
    for level in (1, 2, 3):
        assert choose(GAME, state, 1, level, random.Random(1)) == "accept 1"


def test_level_three_beats_random_players():
    """The benchmark's goal on a few games: the robot's seat wins more often than a
    random seat does on average."""
    won = {"robot": 0, "random": 0}
    for game in range(9):
        seat = game % 3
        levels = tuple(3 if s == seat else 0 for s in range(3))
        state = play(levels, seed=100 + game)
        for winner in GAME.result(state).winners:
            won["robot" if winner == seat else "random"] += 1
    assert won["robot"] >= 3 and won["robot"] > won["random"] / 2, won


def test_the_table_plays_a_round_as_the_engine_does():
    """A round carried out on the compact table ends as the engine's own."""
    rng = random.Random(3)
    for _ in range(6):
        state = new_game(3, rng)
        table = robots.Table.of(GAME, state)
        for seat in range(3):
            order = robots._order(table, seat)
            table.play(seat, order)
            act(state, seat, robots._order_text(order), rng)
        for seat in (0, 1):
            table.play(seat, ("done",))
            act(state, seat, "done", rng)
        assert (table.round, table.lives, table.beasts) == (state.round, state.lives, state.beasts)
        assert table.hands == [robots._counts(h) for h in state.hands]
        assert table.stock == [robots._counts(p) for p in state.stock]
        assert table.trash == robots._counts(state.trash)

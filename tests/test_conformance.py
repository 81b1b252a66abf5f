"""The protocol every registered game keeps (pbmserv/games/base.py).

One module over every game: a new game joins by registering itself. For each game and
player count: random playouts end; `check` never raises; serialise/restore and the
move log replay exactly; views and boards leak nothing `resample_hidden` changes.
"""

from __future__ import annotations

import json
import random
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games import Game, State, Verdict, games
from pbmserv.render import render_board

ACTION_BOUND = 5000  # far beyond any real game; a playout that reaches it never ends
SEED = 20240601


def configurations() -> list[tuple[str, int]]:
    """(game name, players) at the minimum and, if different, the maximum count."""
    return [
        (name, players)
        for name in sorted(games())
        for players in sorted({games()[name].min_players, games()[name].max_players})
    ]


CONFIGURATIONS = configurations()
IDS = [f"{name}-{players}p" for name, players in CONFIGURATIONS]


def json_round_trip(data):
    """What the store keeps: the data as JSON, read back."""
    return json.loads(json.dumps(data))


def default_params(game: Game) -> dict[str, int]:
    return {p.name: p.default for p in game.params}


def fresh(game: Game, players: int, chance) -> State:
    return game.setup(players, default_params(game), json_round_trip(chance))


def names(players: int) -> list[str]:
    return [f"player{seat}" for seat in range(players)]


def assert_consistent(game: Game, state: State, players: int) -> None:
    """Invariants that hold at every step of every game."""
    to_act = game.to_act(state)
    assert (game.result(state) is None) == bool(to_act)
    data = game.serialise(state)
    restored = game.restore(json_round_trip(data))
    assert game.serialise(restored) == data
    assert game.to_act(restored) == to_act
    for seat in range(players):
        assert game.legal_moves(restored, seat) == game.legal_moves(state, seat)


def assert_views_hide_nothing(game: Game, state: State, players: int, rng: random.Random) -> None:
    """Each seat's view and board (and the public ones) survive resampling what that
    seat cannot see."""
    for seat in [None, *range(players)]:
        view = game.view(state, seat)
        board = render_board(game, view, names(players))
        assert isinstance(board, str) and board
        other = game.resample_hidden(state, seat, rng)
        assert game.view(other, seat) == view
        assert render_board(game, game.view(other, seat), names(players)) == board


@cache
def playout(name: str, players: int) -> tuple:
    """A seeded random game: (initial chance, move log, serialised states after set-up
    and after each action, whether it was played to the end). Games that cannot list
    their legal moves stop at the start. Playout assertions run while it is made."""
    game = games()[name]
    rng = random.Random(f"{SEED}-{name}-{players}")
    chance = json_round_trip(game.initial_chance(players, default_params(game), rng))
    state = fresh(game, players, chance)
    log, snapshots = [], [game.serialise(state)]
    assert_consistent(game, state, players)
    assert_views_hide_nothing(game, state, players, rng)
    while game.to_act(state):
        assert len(log) < ACTION_BOUND, f"{name} not over after {ACTION_BOUND} actions"
        legal = {seat: game.legal_moves(state, seat) for seat in sorted(game.to_act(state))}
        if None in legal.values():
            return chance, json_round_trip(log), snapshots, False
        choices = [(seat, move) for seat, moves in legal.items() for move in moves]
        assert choices, f"{name}: seats {sorted(legal)} may act but have no legal move"
        seat, move = rng.choice(choices)
        verdict = game.check(state, seat, move)
        assert verdict.ok and verdict.move == move, (move, verdict)
        outcome = json_round_trip(game.draw(state, seat, move, rng))
        game.apply(state, seat, move, outcome)
        log.append((seat, move, outcome))
        snapshots.append(game.serialise(state))
        assert_consistent(game, state, players)
        assert_views_hide_nothing(game, state, players, rng)
    return chance, json_round_trip(log), snapshots, True


def start_state(game: Game, players: int) -> State:
    return fresh(game, players, game.initial_chance(players, default_params(game), random.Random(SEED)))


def moments(name: str, players: int) -> list[dict]:
    """Serialised states to probe: the start, the middle and the end of the playout."""
    _, _, snapshots, _ = playout(name, players)
    return [snapshots[0], snapshots[len(snapshots) // 2], snapshots[-1]]


@pytest.mark.parametrize("name, players", CONFIGURATIONS, ids=IDS)
def test_random_playout_ends_with_a_result(name, players):
    game = games()[name]
    _, _, snapshots, complete = playout(name, players)
    if not complete:
        pytest.skip(f"{name} does not list its legal moves, so it cannot be played at random")
    final = game.restore(snapshots[-1])
    assert game.to_act(final) == frozenset()
    assert game.result(final) is not None


@pytest.mark.parametrize("name, players", CONFIGURATIONS, ids=IDS)
def test_move_log_replays_exactly(name, players):
    game = games()[name]
    chance, log, snapshots, _ = playout(name, players)
    state = fresh(game, players, chance)
    assert game.serialise(state) == snapshots[0]
    for step, (seat, move, outcome) in enumerate(log, start=1):
        game.apply(state, seat, move, outcome)
        assert game.serialise(state) == snapshots[step]


@pytest.mark.parametrize("name, players", CONFIGURATIONS, ids=IDS)
def test_every_legal_move_at_the_start_checks_as_itself(name, players):
    game = games()[name]
    state = start_state(game, players)
    for seat in game.to_act(state):
        for move in game.legal_moves(state, seat) or []:
            assert game.check(state, seat, move) == Verdict(move=move)


@pytest.mark.parametrize("name, players", CONFIGURATIONS, ids=IDS)
def test_resigning_keeps_result_and_to_act_consistent(name, players):
    game = games()[name]
    for seat in range(players):
        state = start_state(game, players)
        game.resign(state, seat)
        assert seat not in game.to_act(state)
        assert_consistent(game, state, players)


def assert_check_is_safe(game: Game, snapshot: dict, seat: int, text: str) -> None:
    """`check` answers a Verdict, a listed move or an error, and changes nothing."""
    state = game.restore(snapshot)
    verdict = game.check(state, seat, text)
    assert isinstance(verdict, Verdict)
    if verdict.ok:
        legal = game.legal_moves(state, seat)
        assert legal is None or verdict.move in legal
    else:
        assert isinstance(verdict.error, str) and verdict.error
    assert game.serialise(state) == snapshot


JUNK = ["", " ", "\n", "\x00", "\udcff", "İ", "ａ", "#7", "-1", "a" * 100_000, "\u202e\u0301", "None"]


@pytest.mark.parametrize("name, players", CONFIGURATIONS, ids=IDS)
def test_check_never_raises_on_known_junk(name, players):
    game = games()[name]
    for snapshot in moments(name, players):
        for seat in range(players):
            for text in JUNK:
                assert_check_is_safe(game, snapshot, seat, text)


@pytest.mark.parametrize("name, players", CONFIGURATIONS, ids=IDS)
@settings(max_examples=50, deadline=None)
@given(data=st.data(), text=st.text())
def test_check_never_raises_on_any_text(name, players, data, text):
    game = games()[name]
    snapshot = data.draw(st.sampled_from(moments(name, players)))
    seat = data.draw(st.integers(0, players - 1))
    assert_check_is_safe(game, snapshot, seat, text)


@pytest.mark.parametrize("name", sorted(games()))
def test_a_game_with_timers_of_its_own_says_so(name):
    """The server's nag and forfeit clocks run only where the engine sets no deadlines:
    a game that overrides `timers` must declare `own_deadlines`, and the reverse."""
    game = games()[name]
    assert game.own_deadlines == (type(game).timers is not Game.timers)


@pytest.mark.parametrize("name", sorted(games()))
def test_chance_and_hidden_information_are_declared(name):
    """`undo` is offered only where neither holds, so the flags must be true to the code."""
    game = games()[name]
    rolls = type(game).draw is not Game.draw or type(game).initial_chance is not Game.initial_chance
    assert game.has_chance == rolls
    assert game.hidden_information == (type(game).resample_hidden is not Game.resample_hidden)

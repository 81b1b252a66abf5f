"""Game engines: random full games per second for every registered game (and player
count), and Serpent's move check and legal-move list on size-6 mid-game positions.

    .venv/bin/python bench/run.py engines          # full size (about half a minute)
    .venv/bin/python bench/run.py --quick engines  # a few seconds

Random games. Each game and player count (the minimum and, if different, the maximum)
plays seeded random games from set-up to result for a fixed time budget, as the server
would play them: the set-up chance (`initial_chance`) and each move's chance (`draw`)
come from a seeded `random.Random`, as in pbmserv/play.py. Each action picks uniformly
among the legal moves of every seat in `to_act` (as tests/test_conformance.py does), and
is then checked (`check`), drawn for and applied, as a mail's move is. A game whose
engine cannot list its moves (`legal_moves` is None, e.g. Survive) or that waits with
nobody to act is played by its own deadlines instead: the earliest of `Game.timers`
passes (`Game.timeout`), as it does for silent players; the note says so.

Baseline. Times on a shared 2-core machine are noise, so each time is divided by the
time of a reference operation measured in the same run: the deep copy of that game's
start position as the server makes it when it loads a board, `serialise`, a JSON round
trip (what the store keeps) and `restore`. That baseline is the cheapest thing every
engine must do, it is the same game's own code with the same interpreter and machine
load, and it scales with the size of that game's state, so the ratio reads "one random
full game costs N copies of its start position" and is comparable across machines and
runs. (The alternative, bench_serpent's Super-Wari `check` on the start position, is a
single yardstick for all games but ties every ratio to one engine's parser.) `value` is
therefore milliseconds per game; games per second and the mean length of a game are in
the note.

Serpent. The median time of `check` (one legal move, chosen at random) and of
`legal_moves` (every legal action) on size-6 positions reached by 30 random plies, each
against the median deep copy of those same positions. Goal: checking a move takes under
5 ms (an absolute goal from the issue: a mail's move must be checked at once).

This supersedes bench/bench_serpent.py.
"""

from __future__ import annotations

import json
import random
import statistics
import time

import common
from common import Result, median_seconds

from pbmserv.games import Game, State, get_game, games

SEED = 20240601
ACTION_BOUND = 5000  # far beyond any real game; a playout that reaches it never ends
CHECK_GOAL_SECONDS = 0.005
SERPENT_SIZE = 6
SERPENT_PLIES = 30


def default_params(game: Game) -> dict[str, int]:
    return {p.name: p.default for p in game.params}


def configurations() -> list[tuple[str, int]]:
    """(game name, players) at the minimum and, if different, the maximum count."""
    return [(name, players) for name, game in games().items()
            for players in sorted({game.min_players, game.max_players})]


def earliest_timer(game: Game, state: State) -> str | None:
    """The engine deadline that falls first when all start now: the shortest, then by name."""
    timers = game.timers(state)
    return min(timers, key=lambda name: (timers[name], name)) if timers else None


def random_game(game: Game, players: int, seed: int) -> tuple[int, bool]:
    """Play one seeded random game to its result: (actions taken, whether some of them
    were deadlines passing because no move could be listed)."""
    rng = random.Random(f"{SEED}-{game.name}-{players}-{seed}")
    params = default_params(game)
    state = game.setup(players, params, game.initial_chance(players, params, rng))
    actions, timed_out = 0, False
    while game.result(state) is None:
        if actions >= ACTION_BOUND:
            raise RuntimeError(f"{game.name} ({players} players) not over after {ACTION_BOUND} actions")
        actions += 1
        legal = {seat: game.legal_moves(state, seat) for seat in sorted(game.to_act(state))}
        choices = [(seat, move) for seat, moves in legal.items() for move in moves or ()]
        if not choices:  # nobody can list a move (or nobody acts): the next deadline passes
            name = earliest_timer(game, state)
            if name is None:
                raise RuntimeError(f"{game.name} ({players} players): no move can be listed and no deadline runs")
            game.timeout(state, name)
            timed_out = True
            continue
        seat, move = rng.choice(choices)
        verdict = game.check(state, seat, move)
        if not verdict.ok:
            raise RuntimeError(f"{game.name}: listed move {move!r} does not check: {verdict.error}")
        game.apply(state, seat, verdict.move, game.draw(state, seat, verdict.move, rng))
    return actions, timed_out


def copy_seconds(game: Game, state: State, repeat: int) -> float:
    """Median seconds of a deep copy as the store makes one: serialise, JSON, restore."""
    return median_seconds(lambda: game.restore(json.loads(json.dumps(game.serialise(state)))), repeat)


def start_position(game: Game, players: int) -> State:
    params = default_params(game)
    return game.setup(players, params, game.initial_chance(players, params, random.Random(SEED)))


def bench_random_games(name: str, players: int, budget: float, copies: int) -> Result:
    game = games()[name]
    baseline = copy_seconds(game, start_position(game, players), copies)
    played, actions, timed_out = 0, 0, False
    start = time.perf_counter()
    while played < 3 or time.perf_counter() - start < budget:
        taken, timers = random_game(game, players, played)
        played += 1
        actions += taken
        timed_out |= timers
    per_game = (time.perf_counter() - start) / played
    label = f"{name} {players}p" if game.min_players != game.max_players else name
    note = f"{1 / per_game:,.1f} games/s, {played} games, {actions / played:.0f} actions/game"
    if timed_out:
        note += "; played by its deadlines: its moves cannot be listed"
    return Result(f"{label}: random full game", per_game * 1e3, baseline * 1e3, "ms",
                  note=note + "; baseline: copy of the start position")


def serpent_midgame_positions(count: int) -> list[tuple[State, random.Random]]:
    """Size-6 positions after SERPENT_PLIES random plies (games over by then are skipped)."""
    game = get_game("serpent")
    positions = []
    seed = 0
    while len(positions) < count:
        rng = random.Random(seed)
        seed += 1
        state = game.setup(2, {"size": SERPENT_SIZE}, None)
        for _ in range(SERPENT_PLIES):
            if not game.to_act(state):
                break
            seat = min(game.to_act(state))
            game.apply(state, seat, rng.choice(game.legal_moves(state, seat)), None)
        if game.to_act(state):
            positions.append((state, rng))
    return positions


def bench_serpent(quick: bool) -> list[Result]:
    serpent = get_game("serpent")
    checks, listings, copies, sizes = [], [], [], []
    for state, rng in serpent_midgame_positions(3 if quick else 10):
        seat = min(serpent.to_act(state))
        legal = serpent.legal_moves(state, seat)
        sizes.append(len(legal))
        move = rng.choice(legal)
        copies.append(copy_seconds(serpent, state, 20 if quick else 200))
        checks.append(median_seconds(lambda: serpent.check(state, seat, move), 5 if quick else 20))
        listings.append(median_seconds(lambda: serpent.legal_moves(state, seat), 1 if quick else 3))
    check, listing, copy = (statistics.median(x) for x in (checks, listings, copies))
    where = f"size {SERPENT_SIZE}, {len(checks)} positions after {SERPENT_PLIES} plies"
    return [
        Result("serpent: check one move (mid-game)", check * 1e3, copy * 1e3, "ms", goal="< 5 ms",
               met=check < CHECK_GOAL_SECONDS, note=f"median; {where}; baseline: copy of the position"),
        Result("serpent: list all legal actions (mid-game)", listing * 1e3, copy * 1e3, "ms",
               note=f"median; {statistics.median(sizes):.0f} legal actions; {where}; "
                    "baseline: copy of the position"),
    ]


def run(quick: bool) -> list[Result]:
    budget, copies = (0.15, 50) if quick else (4.0, 500)
    results = [bench_random_games(name, players, budget, copies) for name, players in configurations()]
    return results + bench_serpent(quick)


if __name__ == "__main__":
    common.report(run(quick=False))

"""Robot strength and speed: each level plays seeded games against random legal moves
(level 0) and against the level below, seats alternating, straight on the engines (no
mail, no database), and the CPU time of each robot move is measured.

    .venv/bin/python bench/bench_robots.py                    # every game, 200 games a match
    .venv/bin/python bench/bench_robots.py --game serpent --games 50
    .venv/bin/python bench/run.py --quick robots              # a smoke run, 10 games a match

Goals (issue 19): the strongest level wins at least 90% against random in every
two-player game and at least 70% against the level below; in Survive, robots finish
ahead of random players on average (a robot's share of wins above a random player's);
the strongest level takes at most 1 s of CPU per move (median) and 3 s at most.

Baselines, measured in the same run: a win rate against the even match of random
against random (the same games, both seats random); CPU per move against the time of
a random legal move. The matches run on two processes; a game's moves are chosen as
the server's robots role chooses them (`pbmserv.robots.choose`), with the chance the
server would draw from a seeded RNG.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import common
from common import Result

from bench_engines import earliest_timer
from pbmserv.games import games
from pbmserv.robots import choose

SEED = 20261201
ACTION_BOUND = 5000
GAMES = ["superwari", "wari", "survival", "serpent", "survive"]
SURVIVE_PLAYERS = 3
TOP = 3


@dataclass
class Played:
    """One game: the winning seats (none after a tie), and the CPU seconds of each
    robot move by level."""

    winners: tuple[int, ...]
    seconds: dict[int, list[float]] = field(default_factory=dict)


def play(name: str, levels: tuple[int, ...], seed: int, params: dict[str, int] | None = None) -> Played:
    """A game between `levels` (one per seat, 0: random legal moves)."""
    game = games()[name]
    rng = random.Random(f"{SEED}-{name}-{levels}-{seed}")
    params = {p.name: p.default for p in game.params} | (params or {})
    state = game.setup(len(levels), params, game.initial_chance(len(levels), params, rng))
    seconds: dict[int, list[float]] = defaultdict(list)
    for _ in range(ACTION_BOUND):
        outcome = game.result(state)
        if outcome is not None:
            return Played(outcome.winners, dict(seconds))
        acting = sorted(game.waiting_for(state))  # a robot acts when the board waits for it
        if not acting:
            timer = earliest_timer(game, state)
            if timer is None:
                raise RuntimeError(f"{name}: nobody acts and no deadline runs")
            game.timeout(state, timer)
            continue
        seat = acting[0]
        level = levels[seat]
        start = time.process_time()
        move = choose(game, state, seat, level, random.Random(rng.random()))
        if level:
            seconds[level].append(time.process_time() - start)
        verdict = game.check(state, seat, move)
        if not verdict.ok:
            raise RuntimeError(f"{name}: level {level} chose {move!r}: {verdict.error}")
        game.apply(state, seat, verdict.move, game.draw(state, seat, verdict.move, rng))
    raise RuntimeError(f"{name} {levels}: not over after {ACTION_BOUND} actions")


@dataclass
class Match:
    """Level `a` against level `b` (or, with more seats, `a` against `b` in every
    other seat), `a`'s seat alternating."""

    name: str
    a: int
    b: int
    count: int
    seats: int = 2


def seatings(match: Match) -> list[tuple[tuple[int, ...], int]]:
    """(levels by seat, a's seat) for each game of the match."""
    out = []
    for i in range(match.count):
        seat = i % match.seats
        levels = tuple(match.a if s == seat else match.b for s in range(match.seats))
        out.append((levels, seat))
    return out


def one(args):
    name, levels, seed = args
    return play(name, levels, seed)


def run_match(match: Match, pool) -> tuple[float, float, dict[int, list[float]]]:
    """(share of wins of `a`, share of wins of one `b` seat, CPU seconds by level);
    a tie is no win, and a win shared by several seats is shared."""
    games_ = seatings(match)
    results = pool.map(one, [(match.name, levels, i) for i, (levels, _) in enumerate(games_)], chunksize=1)
    a_share = b_share = 0.0
    seconds: dict[int, list[float]] = defaultdict(list)
    for (levels, seat), played in zip(games_, results):
        credit = (1 / len(played.winners)) if played.winners else 0.0
        a_share += credit if seat in played.winners else 0.0
        others = [s for s in range(match.seats) if s != seat]
        b_share += sum(credit for s in others if s in played.winners) / len(others)
        for level, samples in played.seconds.items():
            seconds[level] += samples
    return a_share / match.count, b_share / match.count, dict(seconds)


def matches(name: str, count: int) -> list[Match]:
    seats = SURVIVE_PLAYERS if name == "survive" else 2
    found = [Match(name, level, 0, count, seats) for level in range(1, TOP + 1)]
    found += [Match(name, level, level - 1, count, seats) for level in range(2, TOP + 1)]
    return found


def bench_game(name: str, count: int, pool) -> list[Result]:
    seats = SURVIVE_PLAYERS if name == "survive" else 2
    even, _, random_seconds = run_match(Match(name, 0, 0, count, seats), pool)
    results = []
    cpu: dict[int, list[float]] = defaultdict(list)
    for match in matches(name, count):
        start = time.perf_counter()
        a, b, seconds = run_match(match, pool)
        for level, samples in seconds.items():
            cpu[level] += samples
        if seats == 2:
            goal = ">= 90%" if match.b == 0 else ">= 70%"
            met = (a >= 0.9 if match.b == 0 else a >= 0.7) if match.a == TOP else None
        else:
            goal, met = "ahead of the others", (a > b) if match.a == TOP else None
        results.append(Result(f"{name}: level {match.a} vs {'random' if match.b == 0 else f'level {match.b}'}",
                              100 * a, 100 * even, "% won", goal if met is not None else "", met,
                              f"{match.count} games, the other seats won {100 * b:.0f}% each, "
                              f"{time.perf_counter() - start:.0f} s"))
    random_move = statistics.median(cpu_of_random(name))
    for level in sorted(cpu):
        samples = cpu[level]
        median, worst = statistics.median(samples), max(samples)
        met = median <= 1.0 and worst <= 3.0 if level == TOP else None
        results.append(Result(f"{name}: level {level} CPU per move (median)", median * 1e3, random_move * 1e3, "ms",
                              "<= 1000 ms, max <= 3000 ms" if met is not None else "", met,
                              f"max {worst * 1e3:.0f} ms over {len(samples)} moves; baseline: a random legal move"))
    return results


def cpu_of_random(name: str) -> list[float]:
    """CPU seconds of random moves: level 0 timed as a robot is."""
    game = games()[name]
    samples = []
    rng = random.Random(SEED)
    seats = SURVIVE_PLAYERS if name == "survive" else 2
    params = {p.name: p.default for p in game.params}
    state = game.setup(seats, params, game.initial_chance(seats, params, rng))
    for _ in range(50):
        if game.result(state) is not None or not game.waiting_for(state):
            break
        seat = min(game.waiting_for(state))
        start = time.process_time()
        move = choose(game, state, seat, 0, rng)
        samples.append(time.process_time() - start)
        verdict = game.check(state, seat, move)
        game.apply(state, seat, verdict.move, game.draw(state, seat, verdict.move, rng))
    return samples or [0.0]


def run(quick: bool, names: list[str] | None = None, count: int | None = None, show: bool = False) -> list[Result]:
    """Every game's matches (`show`: print each game's results as it ends)."""
    count = count or (10 if quick else 200)
    results = []
    with ProcessPoolExecutor(2) as pool:
        for name in names or GAMES:
            found = bench_game(name, count, pool)
            if show:
                common.report(found)
            results += found
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", action="append", choices=GAMES, help="only this game (may repeat)")
    parser.add_argument("--games", type=int, default=200, help="games per match (default 200)")
    args = parser.parse_args(argv)
    run(False, args.game, args.games, show=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

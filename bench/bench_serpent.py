"""Time Serpent's `check` (one move) and `legal_moves` (every legal action) on size-6
mid-game positions reached by seeded random play, against a baseline measured in the
same run: a Super-Wari `check` on its start position.

Run: python bench/bench_serpent.py
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pbmserv.games import get_game  # noqa: E402


def timed(fn, repeat: int) -> float:
    """Median seconds of `fn()` over `repeat` runs."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def midgame_positions(count: int, plies: int = 30) -> list:
    game = get_game("serpent")
    positions = []
    seed = 0
    while len(positions) < count:
        rng = random.Random(seed)
        seed += 1
        state = game.setup(2, {"size": 6}, None)
        for _ in range(plies):
            if not game.to_act(state):
                break
            game.apply(state, state.to_move, rng.choice(game.legal_moves(state, state.to_move)), None)
        if game.to_act(state):
            positions.append((state, rng))
    return positions


def main() -> None:
    serpent, wari = get_game("serpent"), get_game("superwari")
    wari_start = wari.setup(2, {}, None)
    baseline = timed(lambda: wari.check(wari_start, 0, "c"), 2000)
    checks, listings, sizes = [], [], []
    for state, rng in midgame_positions(10):
        seat = state.to_move
        legal = serpent.legal_moves(state, seat)
        sizes.append(len(legal))
        move = rng.choice(legal)
        checks.append(timed(lambda: serpent.check(state, seat, move), 20))
        listings.append(timed(lambda: serpent.legal_moves(state, seat), 3))
    check, listing = statistics.median(checks), statistics.median(listings)
    print(f"baseline Super-Wari check (start): {baseline * 1e6:8.1f} us")
    print(f"Serpent size 6 mid-game check:     {check * 1e3:8.2f} ms  ({check / baseline:,.0f}x baseline)")
    print(f"Serpent size 6 mid-game legal list: {listing * 1e3:7.2f} ms  ({listing / baseline:,.0f}x baseline, "
          f"median {statistics.median(sizes):.0f} legal actions)")


if __name__ == "__main__":
    main()

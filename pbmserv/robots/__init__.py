"""Computer opponents: the robot players `robot1` (weak) to `robot3` (strong).

A robot is a user with no address and no password (`User.robot`, its level). It
never sends or receives mail: when a board waits for a robot's seat, the `robots`
role of `serve` (and `replay`, at the robot's turn, with the mail's clock) asks
`choose` for its move and plays it through the path a player's move takes
(`robots/play.py`).

`choose` is deterministic: it gets a seeded `random.Random` and counts its search in
nodes, never in seconds, so a replay plays the same moves. It sees only what the
seat may know: in a game with hidden information the state it gets is
`Game.resample_hidden(state, seat, rng)`, a position that agrees with the seat's own
view and nothing more.

Each game has a module here with `choose(game, state, seat, level, rng) -> str`,
where level 0 is a uniformly random legal move (the benchmark's opponent) and 1 to
3 are the robots.
"""

from __future__ import annotations

import importlib
import random

from ..games import Game, State

ROBOTS = {"robot1": 1, "robot2": 2, "robot3": 3}  # userid: level; reserved for signup
STRENGTH = {1: "weak", 2: "medium", 3: "strong"}
ROBOT_BOARDS = 10  # running boards with robots one player may have or start: their thinking is shared
MODULES = {"superwari": "mancala", "wari": "mancala", "survival": "survival", "serpent": "serpent",
           "survive": "survive"}  # game name: the module of its robots


def is_robot_name(userid: str) -> bool:
    """Userids a person cannot sign up with: `robot`, `robot1`, `Robot42`, ..."""
    word = userid.lower()
    return word.startswith("robot") and (word[5:] == "" or word[5:].isdecimal())


def choose(game: Game, state: State, seat: int, level: int, rng: random.Random) -> str:
    """The move of a level-`level` robot in `seat`, from what that seat may know."""
    module = importlib.import_module(f"{__name__}.{MODULES[game.name]}")
    known = game.resample_hidden(state, seat, rng) if game.hidden_information else state
    return module.choose(game, known, seat, level, rng)

"""The game protocol: what every rule engine offers the server (DESIGN.md §6).

Engines are pure: no database, no clock, no global randomness. Chance is explicit:
the server asks an engine to `draw` the random outcome a move needs (with a seeded
RNG), logs it beside the move, and `apply` uses only the logged outcome, so the move
log alone replays a game exactly.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True)
class Param:
    """A `-name=value` game parameter, checked before a game is set up."""

    name: str
    default: int
    low: int
    high: int
    help: str

    def parse(self, text: str) -> int:
        """The value of `-name=text`; ValueError with a player-facing message if bad."""
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"-{self.name} must be a whole number from {self.low} to {self.high}, not {text!r}") from None
        if not self.low <= value <= self.high:
            raise ValueError(f"-{self.name} must be from {self.low} to {self.high}, not {value}")
        return value


@dataclass(frozen=True)
class Verdict:
    """The answer of `Game.check`: a canonical move, or an error a player can act on.

    Engines do not know userids: an error names a seat as `{seat0}`, `{seat1}`, ...
    and the server puts in the player's userid (`fill_seats`)."""

    move: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.move is not None


def fill_seats(text: str, names: list[str]) -> str:
    """`text` with each `{seatN}` replaced by the userid in seat N."""
    return re.sub(r"\{seat(\d+)\}", lambda m: names[int(m[1])] if int(m[1]) < len(names) else m[0], text)


@dataclass(frozen=True)
class Outcome:
    """How a game ended: winning seats (empty with `tie=False` means nobody won)."""

    winners: tuple[int, ...] = ()
    tie: bool = False


@dataclass
class State:
    """Base of every engine's state. `resigned` lists seats that resigned, in order."""

    resigned: list[int] = field(default_factory=list)


class Game:
    """One game type. Subclasses set the metadata and implement the methods below.

    Seats are numbered from 0 in the order of the challenge (seat 0 is the challenger).
    """

    name: ClassVar[str]  # command name, e.g. "superwari"
    title: ClassVar[str]  # in subjects, e.g. "Super-Wari"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 2
    params: ClassVar[tuple[Param, ...]] = ()
    move_syntax: ClassVar[str]  # one line, e.g. "a pit letter of your own row: c"
    summary: ClassVar[str]  # one line for `list`
    help_text: ClassVar[str]  # the rules in the project's own words
    template: ClassVar[str]  # board template under templates/games/

    # --- set-up -------------------------------------------------------------------
    def initial_chance(self, players: int, params: dict[str, int], rng: random.Random) -> Any:
        """Random set-up outcome (a deal, a shuffle) as JSON-able data; None if none."""
        return None

    def setup(self, players: int, params: dict[str, int], chance: Any) -> State:
        raise NotImplementedError

    # --- play ---------------------------------------------------------------------
    def to_act(self, state: State) -> frozenset[int]:
        """Seats that may act now; empty once the game is over."""
        raise NotImplementedError

    def check(self, state: State, seat: int, text: str) -> Verdict:
        """Validate `text` as `seat`'s move. Never raises, whatever the text."""
        raise NotImplementedError

    def draw(self, state: State, seat: int, move: str, rng: random.Random) -> Any:
        """Random outcome the checked `move` needs, as JSON-able data; None if none."""
        return None

    def apply(self, state: State, seat: int, move: str, chance: Any) -> None:
        """Play a checked move in place, using only the logged chance outcome."""
        raise NotImplementedError

    def resign(self, state: State, seat: int) -> None:
        """Resign `seat` in place. Two-player default: the other seat wins."""
        state.resigned.append(seat)

    def result(self, state: State) -> Outcome | None:
        """The outcome once the game is over, else None."""
        raise NotImplementedError

    def resigned_outcome(self, state: State, players: int) -> Outcome | None:
        """Helper for `result`: the outcome resignations alone decide, if any."""
        left = [s for s in range(players) if s not in state.resigned]
        if len(left) == 1:
            return Outcome(winners=(left[0],))
        if not left:
            return Outcome()
        return None

    def legal_moves(self, state: State, seat: int) -> list[str] | None:
        """Every legal move of `seat` now, or None where they cannot be listed."""
        return None

    # --- views --------------------------------------------------------------------
    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        """Data for the board template as `seat` sees it (None: the public view).

        Must depend only on what that seat may know."""
        raise NotImplementedError

    def resample_hidden(self, state: State, seat: int | None, rng: random.Random) -> State:
        """A state that differs from `state` only in what `seat` cannot see.

        The conformance suite checks that `view(state, seat)` is unchanged by it.
        Games with no hidden information return an equal copy."""
        return self.restore(self.serialise(state))

    # --- storage ------------------------------------------------------------------
    def serialise(self, state: State) -> dict[str, Any]:
        """JSON-able data from which `restore` rebuilds an equal state."""
        raise NotImplementedError

    def restore(self, data: dict[str, Any]) -> State:
        raise NotImplementedError

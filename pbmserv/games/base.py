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
    """A `-name=value` game parameter (a whole number), checked before set-up."""

    name: str
    default: int
    low: int
    high: int
    help: str

    def parse(self, text: str, players: list[str]) -> int:
        """The value of `-name=text`; ValueError with a player-facing message if bad.
        `players` are the userids by seat, for parameters that name a player."""
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"-{self.name} must be a whole number from {self.low} to {self.high}, not {text!r}") from None
        return self.in_range(value)

    def in_range(self, value: int) -> int:
        if not self.low <= value <= self.high:
            raise ValueError(f"-{self.name} must be from {self.show(self.low)} to {self.show(self.high)}, "
                             f"not {self.show(value)}")
        return value

    placeholder: ClassVar[str] = "N"

    def show(self, value: int) -> str:
        return str(value)

    def describe(self) -> str:
        """One line for `GAME help`."""
        return f"-{self.name}={self.show(self.default)} ({self.show(self.low)} to {self.show(self.high)}): {self.help}"


DURATION = re.compile(r"(\d{1,6})([mhd])")
UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400}


def duration_seconds(text: str) -> int | None:
    """Seconds in a duration written `90m`, `72h` or `3d`; None if it is not one."""
    match = DURATION.fullmatch(text.strip().lower())
    return None if match is None else int(match[1]) * UNIT_SECONDS[match[2]]


class DurationParam(Param):
    """A duration written `90m`, `72h` or `3d`; the value is in seconds."""

    placeholder: ClassVar[str] = "DURATION"

    def parse(self, text: str, players: list[str]) -> int:
        seconds = duration_seconds(text)
        if seconds is None:
            raise ValueError(f"-{self.name} must be a duration such as 72h or 3d, not {text!r}")
        return self.in_range(seconds)

    def show(self, value: int) -> str:
        for unit in ("d", "h", "m"):
            if value % UNIT_SECONDS[unit] == 0:
                return f"{value // UNIT_SECONDS[unit]}{unit}"
        return f"{value}s"


class PlayerParam(Param):
    """A parameter naming one of the players (`-first=USERID`); the value is the seat,
    -1 when not given."""

    placeholder: ClassVar[str] = "USERID"

    def parse(self, text: str, players: list[str]) -> int:
        for seat, userid in enumerate(players):
            if userid.lower() == text.lower():
                return seat
        raise ValueError(f"-{self.name} must name a player of this game ({', '.join(players)}), not {text!r}")

    def describe(self) -> str:
        return f"-{self.name}=USERID: {self.help}"


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


def either(items: list[str]) -> str:
    """A choice in words: 'e', 'e or f', 'c, e or f'."""
    if len(items) == 1:
        return items[0]
    return f"{', '.join(items[:-1])} or {items[-1]}"


def echoed(text: str, limit: int = 20) -> str:
    """Player input quoted back in an error: short and printable."""
    cut = "".join(c if c.isprintable() else "?" for c in text[:limit])
    return cut + ("..." if len(text) > limit else "")


def seats_for_names(text: str, names: list[str]) -> str:
    """`text` with each word that is a player's userid (any case) replaced by `{seatN}`:
    how moves that name players (`give bob W`) reach an engine, which knows only seats."""
    seat_of = {name.lower(): seat for seat, name in enumerate(names)}
    return re.sub(r"[A-Za-z0-9_.-]+", lambda m: f"{{seat{seat_of[m[0].lower()]}}}" if m[0].lower() in seat_of
                  else m[0], text)


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
    names_in_moves: ClassVar[bool] = False  # moves name players: the server turns userids into {seatN}
    own_deadlines: ClassVar[bool] = False  # the engine times its players (`timers`): no server nag or forfeit
    can_tie: ClassVar[bool] = False  # a game can end in a tie: players may `propose` a draw
    has_chance: ClassVar[bool] = False  # `initial_chance` or `draw` deal or roll something
    hidden_information: ClassVar[bool] = False  # views differ by seat; no `undo` where this or chance holds
    move_table: ClassVar[bool] = True  # board mails show the last moves as a table (one column a seat)

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

    def waiting_for(self, state: State) -> frozenset[int]:
        """Seats the board waits for (its status line): by default those that may act."""
        return self.to_act(state)

    def syntax_now(self, state: State, seat: int | None) -> str:
        """The moves `seat` may send now, written as `move_syntax` is."""
        return self.move_syntax

    def check(self, state: State, seat: int, text: str) -> Verdict:
        """Validate `text` as `seat`'s move. Never raises, whatever the text."""
        raise NotImplementedError

    def draw(self, state: State, seat: int, move: str, rng: random.Random) -> Any:
        """Random outcome the checked `move` needs, as JSON-able data; None if none."""
        return None

    def apply(self, state: State, seat: int, move: str, chance: Any) -> None:
        """Play a checked move in place, using only the logged chance outcome."""
        raise NotImplementedError

    # --- time ---------------------------------------------------------------------
    def timers(self, state: State) -> dict[str, int]:
        """The deadlines the game waits on now, by name, each in seconds from the
        moment that name first appeared. The server notes when each appears, and when
        one falls due it logs a timeout action for it and calls `timeout`; so engines
        never read a clock and the move log still replays exactly."""
        return {}

    def timeout(self, state: State, name: str) -> None:
        """Apply in place what the passing of deadline `name` means (the defaults for
        players who did not act)."""
        raise NotImplementedError

    def shown_move(self, seat: int, move: str, viewer: int | None) -> str:
        """How a logged move of `seat` reads in `viewer`'s list of recent moves (None:
        the public): sealed orders and private actions can be shown without their
        secret part."""
        return move

    def private_to(self, state: State, seat: int, move: str) -> frozenset[int] | None:
        """The seats a move and its comment concern when they are private (a tell, an
        offer); None when everyone may read the comment."""
        return None

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

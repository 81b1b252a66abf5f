"""Nag and forfeit: the server's own deadlines, for games whose rules set none.

When a seat's turn begins the server notes the time in `GameRecord.clocks`. After
`nag_after` seconds without a move the player is reminded once; after `forfeit_after`
the server logs a forfeit for them, which ends the game as a resignation would. Time
the player is on vacation does not count; time the server was down is given back by
the scheduler (`scheduler.keep_alive`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, ClassVar, Iterator

from .config import Config
from .games.base import DurationParam, Param, duration_seconds

if TYPE_CHECKING:
    from .games import Game
    from .store.models import GameRecord

NAG, FORFEIT = "nag", "forfeit"
OFF = "off"


@dataclass(frozen=True)
class Deadline:
    """A moment the scheduler waits for: an engine timer (`seat` None), or a nag or
    forfeit of `seat`."""

    due: datetime
    name: str
    seat: int | None = None

    def order(self) -> tuple[datetime, str, int]:
        return self.due, self.name, -1 if self.seat is None else self.seat


class ClockParam(DurationParam):
    """`-nagtime` / `-forfeittime`: a duration, or `off` (stored as 0)."""

    placeholder: ClassVar[str] = "DURATION|off"

    def parse(self, text: str, players: list[str]) -> int:
        return 0 if text.strip().lower() == OFF else super().parse(text, players)

    def show(self, value: int) -> str:
        return OFF if value == 0 else super().show(value)


def in_words(seconds: int) -> str:
    """A clock's length as players read it: '21 days', '36 hours', '90 minutes'."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}" + ("s" if count != 1 else "")
    return f"{seconds} seconds"


def setting_seconds(text: str) -> int:
    """A `[games]` duration in seconds; 0 for `off` (the configuration is checked)."""
    return 0 if text == OFF else duration_seconds(text) or 0


def clock_params(config: Config, game: Game) -> tuple[Param, ...]:
    """The challenge parameters of the server's deadlines, with `[games]` defaults."""
    if game.own_deadlines:
        return ()
    longest = 365 * 86400
    return (
        ClockParam("nagtime", setting_seconds(config.games.nag_time), 3600, longest,
                   "a reminder to a player who has not moved for this long (off: none)"),
        ClockParam("forfeittime", setting_seconds(config.games.forfeit_time), 3600, longest,
                   "a player who has not moved for this long loses the game (off: never)"),
    )


def turn_clocks(record: GameRecord, waiting: frozenset[int], actor: int | None, now: datetime) -> dict:
    """`record.clocks` for the seats now waited for: a clock that runs on keeps its
    start, a new turn (or another move by the seat that just acted) starts now."""
    if not (record.nag_after or record.forfeit_after):
        return {}
    old = record.clocks or {}
    fresh = {"since": now.isoformat(), "nagged": False}
    return {str(seat): old[str(seat)] if str(seat) in old and seat != actor else fresh for seat in sorted(waiting)}


def after_away(since: datetime, seconds: int, away: list[tuple[datetime, datetime]]) -> datetime:
    """When `seconds` of a clock started at `since` have run, the clock stopping during
    the (sorted, disjoint) `away` intervals."""
    due = since + timedelta(seconds=seconds)
    for start, end in away:
        start = max(start, since)
        if end <= start:
            continue
        if start >= due:
            break
        due += end - start
    return due


def clock_deadlines(record: GameRecord) -> Iterator[Deadline]:
    for key, clock in (record.clocks or {}).items():
        seat = int(key)
        since = datetime.fromisoformat(clock["since"])
        away = [(v.start, v.end) for v in record.seats[seat].user.vacations]
        nag_first = not record.forfeit_after or record.nag_after < record.forfeit_after
        pause = clock.get("pause", 0)  # downtime of the server given back
        if record.nag_after and nag_first and not clock["nagged"]:
            yield Deadline(after_away(since, record.nag_after + pause, away), NAG, seat)
        if record.forfeit_after:
            yield Deadline(after_away(since, record.forfeit_after + pause, away), FORFEIT, seat)


def shifted(record: GameRecord, gap: timedelta) -> None:
    """Push every running deadline of `record` `gap` later (downtime given back): the
    engine's timers start later, the turn clocks get `gap` more (their start stays the
    real one, so vacations and reminders still count from it)."""
    record.timers = {name: (datetime.fromisoformat(start) + gap).isoformat() for name, start in record.timers.items()}
    record.clocks = {seat: {**clock, "pause": clock.get("pause", 0) + int(gap.total_seconds())}
                     for seat, clock in (record.clocks or {}).items()}

"""`vacation`: time away, during which no reminders or forfeits fall due.

Vacations stop the nag and forfeit clocks of the player's running games
(`clocks.after_away`): a deadline moves back by the time away. A player may take at
most `[games] vacation_days` in any 365 days, counted back from the command.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ..play import away_until, set_due, when
from ..store.models import User, Vacation
from ..store.repo import running_games
from .base import Command, CommandError, Context, authenticate, command

DAY = timedelta(days=1)
WINDOW = timedelta(days=365)


def days(span: timedelta) -> str:
    count = round(span / DAY, 1)
    return "1 day" if count == 1 else f"{count:g} days"


TENTH = DAY / 10


def shown_left(span: timedelta) -> timedelta:
    """Vacation left as every message shows it: whole tenths of a day, rounded down,
    so that any number of DAYS a message says is left is granted."""
    return max(span // TENTH * TENTH, timedelta(0))


def used(user: User, now: datetime) -> timedelta:
    """Vacation time taken in the 365 days up to `now` (a running vacation up to now)."""
    return sum((max(min(v.end, now) - max(v.start, now - WINDOW), timedelta(0)) for v in user.vacations),
               timedelta(0))


@command
class VacationCommand(Command):
    name = "vacation"
    arguments = "USERID PASSWORD on|off|DAYS"
    summary = "go away (for DAYS, or until 'off'): no reminders or forfeits meanwhile"
    description = ("Your opponents see it on the board mails. Each user has a yearly allowance of\n"
                   "vacation days (30 unless the server says otherwise) in any 365 days; 'on' lasts\n"
                   "until you send 'off', at most for the days you have left.")
    min_args = max_args = 3
    password_args = (1,)

    def run(self, ctx: Context, args: list[str]) -> str:
        userid, password, what = args
        user = authenticate(ctx, userid, password)
        now = ctx.now
        current = next((v for v in user.vacations if v.start <= now < v.end), None)
        allowance = timedelta(days=ctx.config.games.vacation_days)
        left = allowance - used(user, now)
        what = what.lower()
        if what == "off":
            if current is None:
                raise CommandError(f"{user.userid} is not on vacation.",
                                   f"To go away, send: vacation {user.userid} PASSWORD on|DAYS")
            current.end = now
            text = f"Welcome back, {user.userid}: your vacation ended at {when(now)}."
        else:
            if what == "on":
                length = left
            elif what.isdecimal() and int(what) >= 1:
                length = timedelta(days=min(int(what), 100_000))
            else:
                raise CommandError(f"'{what}' is not on, off or a number of days (1 or more).",
                                   f"Send: vacation {user.userid} PASSWORD on|off|DAYS, e.g. vacation {user.userid} PASSWORD 14")
            if left <= timedelta(0) or length > left:
                instead = (f"Send: vacation {user.userid} PASSWORD DAYS with at most the days left, or 'on'."
                           if left > timedelta(0) else "Days taken count again 365 days after they were taken.")
                raise CommandError(
                    f"{user.userid} has {days(shown_left(left))} of vacation left: "
                    f"{days(allowance - shown_left(left))} of {days(allowance)} were taken in the last 365 days.",
                    instead)
            if current is None:
                user.vacations.append(Vacation(start=now, end=now + length))
            else:  # plans changed: the time away so far counts, the rest is planned anew
                current.end = now + length
            until = "until you send 'off', at the latest " if what == "on" else ""
            text = (f"{user.userid} is on vacation {until}until {when(now + length)}: no reminders or forfeits "
                    f"meanwhile, and your opponents see it on the board mails.")
        for record in running_games(ctx.session, user):
            set_due(record)
        left = allowance - used(user, now) - planned(user, now)
        text += f"\nVacation left: {round(shown_left(left) / DAY, 1):g} of {days(allowance)} in 365 days.\n"
        ctx.reply("pbmserv vacation", text, also_to=user.emails)
        return text.splitlines()[0]


def planned(user: User, now: datetime) -> timedelta:
    """The rest of the vacation `user` is on."""
    until = away_until(user, now)
    return until - now if until is not None else timedelta(0)

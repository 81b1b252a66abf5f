"""`set`: a user's mail preferences (DESIGN.md §7).

html on|off
    Board mails carry an HTML part that draws the board (on), or only the text (off).
mail every|turn|digest
    Which board mails come: all (every); only those where the user must act, and the
    game's end (turn); none but one digest a day (digest, `digest.py`). The answer to
    the user's own command comes always, and so do deadlines, reminders, forfeits,
    chat and messages.
digest HH:MM
    When (UTC) the day's digest is sent.
listed on|off
    Whether `players` lists the user, for others to find someone to play with.
"""

from __future__ import annotations

import re
from datetime import datetime

from ..digest import next_digest
from ..store.models import User
from .base import Command, CommandError, Context, authenticate, command

CHOICES = {"html": ("on", "off"), "mail": ("every", "turn", "digest"), "listed": ("on", "off")}
TIME = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)")


def shown(user: User) -> str:
    """The preferences of `user`, one a line, each with what it does."""
    mail = {"every": "a mail for every action on your boards",
            "turn": "only the mails where you must act, and the game's end",
            "digest": f"one digest a day at {user.digest_at} UTC with the boards where you must act"}[user.mail]
    return "\n".join([
        f"  html {'on' if user.html else 'off':<7} " + ("board mails draw the board in HTML too" if user.html
                                                    else "board mails are plain text only"),
        f"  mail {user.mail:<7} {mail}",
        f"  digest {user.digest_at} the time of the digest (UTC), for 'mail digest'",
        f"  listed {'on' if user.listed else 'off':<5} " + ("'players' lists you" if user.listed
                                                          else "'players' does not list you"),
    ])


@command
class Set(Command):
    name = "set"
    arguments = "USERID PASSWORD [NAME VALUE]"
    summary = "your mail preferences; alone: show them"
    description = ("html on|off     board mails draw the board in HTML too (on), or are text only\n"
                   "mail every      a mail for every action on your boards (the default)\n"
                   "mail turn       only the mails where you must act, and the game's end\n"
                   "mail digest     one mail a day with the boards where you must act\n"
                   "digest HH:MM    when the digest comes, UTC (07:00)\n"
                   "listed on|off   whether 'players' lists you (off)\n"
                   "Deadlines, reminders, forfeits, chat and messages come whatever you\n"
                   "choose, and so does the answer to your own command.")
    min_args, max_args = 2, 4
    password_args = (1,)

    def run(self, ctx: Context, args: list[str]) -> str:
        userid, password, *change = args
        user = authenticate(ctx, userid, password)
        if len(change) == 1:
            raise CommandError(f"'set {user.userid} PASSWORD {change[0]}' needs a value.",
                               f"Send: set {user.userid} PASSWORD {example(change[0].lower())}")
        done = ""
        if change:
            done = apply(user, change[0].lower(), change[1].lower(), ctx.now) + "\n\n"
        ctx.reply("pbmserv preferences", f"{done}The mail preferences of {user.userid}:\n{shown(user)}\n\n"
                  f"To change one, send: set {user.userid} PASSWORD NAME VALUE\n"
                  f"For example: set {user.userid} PASSWORD mail turn\n", also_to=user.emails)
        return f"Preferences of {user.userid} {'changed' if change else 'sent'}."


def example(name: str) -> str:
    if name == "digest":
        return "digest 07:00"
    return f"{name} {'|'.join(CHOICES.get(name, ('VALUE',)))}"


def apply(user: User, name: str, value: str, now: datetime) -> str:
    """Set one preference; what changed, in words."""
    if name == "digest":
        match = TIME.fullmatch(value)
        if match is None:
            raise CommandError(f"'{value[:20]}' is not a time of day.",
                               f"Send the time in hours and minutes, UTC: set {user.userid} PASSWORD digest 07:00")
        user.digest_at = f"{int(match[1]):02d}:{match[2]}"
        if user.mail == "digest":
            user.digest_due = next_digest(now, user.digest_at)
        return f"Your digest comes at {user.digest_at} UTC from now on."
    if name not in CHOICES:
        raise CommandError(f"There is no preference '{name[:20]}': the preferences are html, mail, digest "
                           "and listed.", f"Send: set {user.userid} PASSWORD NAME VALUE, e.g. set {user.userid} "
                           f"PASSWORD mail turn; 'set {user.userid} PASSWORD' alone shows them.")
    if value not in CHOICES[name]:
        raise CommandError(f"'{value[:20]}' is not a value of {name}.",
                           f"Send: set {user.userid} PASSWORD {example(name)}")
    if name == "html":
        user.html = value == "on"
    elif name == "listed":
        user.listed = value == "on"
    else:
        if value == "digest" and user.mail != "digest":
            user.digest_since, user.digest_due = now, next_digest(now, user.digest_at)
        elif value != "digest":
            user.digest_since = user.digest_due = None
        user.mail = value
    return f"{name} is {value} now."

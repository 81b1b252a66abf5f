"""Account recovery and admin commands: forgot, reset, signoff, all games, abort,
disable, enable.

A closed account (`User.disabled`, set by `signoff` or an admin's `disable`) cannot
authenticate: `authenticate` in base.py refuses it.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from ..games import get_game
from ..play import board_mails, current_state, engine_of, names, refresh_timers, seat_of, status_line, when
from ..store.models import GameRecord, User
from ..store.repo import find_game, find_user, rate_limited, running_games
from .account import mailed_token, set_password, token_hash
from .base import Command, CommandError, Context, ask_admins, authenticate, command
from .boards import resign

log = logging.getLogger(__name__)

RESET_VALID = timedelta(hours=24)
RESETS_PER_DAY = 3  # token mails per user a day, so `forgot` cannot be used to flood someone


def is_admin(ctx: Context, user: User) -> bool:
    return user.userid_key in {a.lower() for a in ctx.config.server.admins}


def require_admin(ctx: Context, user: User, what: str) -> None:
    if not is_admin(ctx, user):
        raise CommandError(f"Only admins may {what}, and {user.userid} is not one.",
                           ask_admins(ctx, "to do it", user.userid))


def own_account(ctx: Context, admin: User) -> str:
    """What an admin who tried to close their own account may do instead."""
    return (ask_admins(ctx, "to close it", admin.userid, but=admin.userid)
            + f"\nOr close it yourself: signoff {admin.userid} PASSWORD")


def find_target(ctx: Context, userid: str, usage: str) -> User:
    user = find_user(ctx.session, userid)
    if user is None:
        raise CommandError(f"There is no user {userid}.", f"Check the spelling of the userid and send: {usage}")
    return user


def board_label(record: GameRecord) -> str:
    return f"{engine_of(record).title} board {record.board}"


@command
class Forgot(Command):
    name = "forgot"
    arguments = "USERID"
    summary = "mail a token to set a new password to your registered addresses"
    description = ("The token is valid for 24 hours; send it back with: reset USERID TOKEN NEWPASSWORD.\n"
                   "It goes only to the addresses registered to USERID, at most 3 times a day.")
    min_args = max_args = 1

    def run(self, ctx: Context, args: list[str]) -> str:
        (userid,) = args
        user = find_user(ctx.session, userid)
        if (user is not None and not user.disabled and user.emails
                and not rate_limited(ctx.session, "forgot", user.userid_key, ctx.now, RESETS_PER_DAY)):
            token = mailed_token(ctx, user.userid_key, "reset")
            user.reset_token_hash, user.reset_expires = token_hash(token), ctx.now + RESET_VALID
            ctx.notify(user.emails, "pbmserv reset", (
                f"{ctx.mail.sender} asked for a new password for {user.userid}.\n"
                f"To set one, send this line before {when(user.reset_expires)}:\n\n"
                f"  reset {user.userid} {token} NEWPASSWORD\n\n"
                "If you did not ask for it, ignore this mail: your password stays as it is.\n"))
        # The same answer whether or not the user exists, so userids cannot be probed.
        ctx.reply("pbmserv forgot", f"If {userid} exists, a reset token was mailed to its registered addresses.\n")
        return f"Reset of {userid} asked for."


@command
class Reset(Command):
    name = "reset"
    arguments = "USERID TOKEN NEWPASSWORD"
    summary = "set a new password with the token that 'forgot' mailed"
    min_args = max_args = 3
    password_args = (1, 2)

    def run(self, ctx: Context, args: list[str]) -> str:
        userid, token, new = args
        user = find_user(ctx.session, userid)
        if user is None or not user.reset_token_hash or user.reset_token_hash != token_hash(token):
            raise CommandError(f"That token sets no new password for {userid}.",
                               "Send the reset line exactly as the reset mail shows it,\n"
                               f"or ask for a new token: forgot {userid}")
        if user.reset_expires is None or ctx.now >= user.reset_expires:
            expired = f" at {when(user.reset_expires)}" if user.reset_expires else ""
            raise CommandError(f"The reset token for {user.userid} expired{expired}.",
                               f"Ask for a new one: forgot {user.userid}")
        if user.disabled:
            raise CommandError(f"The account {user.userid} is closed.",
                               ask_admins(ctx, "to open it again", closed=True))
        set_password(ctx, user, new)
        ctx.reply("pbmserv reset", f"The password of {user.userid} is changed.\n", also_to=user.emails)
        return f"Password of {user.userid} reset."


@command
class Signoff(Command):
    name = "signoff"
    arguments = "USERID PASSWORD"
    summary = "close your account, resigning every game you play"
    description = "The password then no longer works; an admin can open the account again."
    min_args = max_args = 2
    password_args = (1,)

    def run(self, ctx: Context, args: list[str]) -> str:
        userid, password = args
        user = authenticate(ctx, userid, password)
        records = running_games(ctx.session, user)
        for record in records:
            resign(ctx, record, user, seat_of(record, user))
        user.disabled = True
        user.reset_token_hash, user.reset_expires = None, None
        resigned = (f"{user.userid} resigned on: {', '.join(board_label(r) for r in records)}.\n" if records
                    else f"{user.userid} had no running games.\n")
        ctx.reply("pbmserv signoff", f"The account {user.userid} is closed.\n{resigned}Thank you for playing.\n\n"
                  + ask_admins(ctx, "to open the account again", closed=True) + "\n", also_to=user.emails)
        log.info("account %s closed by signoff, resigned %d games", user.userid, len(records))
        return f"Account {user.userid} closed."


@command
class AllGames(Command):
    name = "all games"
    arguments = "USERID"
    summary = "the running boards of a player in every game, with their status"
    min_args = max_args = 1

    def run(self, ctx: Context, args: list[str]) -> str:
        user = find_target(ctx, args[0], self.usage())
        records = running_games(ctx.session, user)
        if records:
            width = max(len(r.game_type) for r in records)
            rows = "".join(f"  {r.game_type:<{width}}  {r.board}  {', '.join(names(r))}: "
                           f"{status_line(r, current_state(r))}\n" for r in records)
            body = f"Running boards of {user.userid}:\n\n{rows}"
        else:
            body = f"{user.userid} plays on no running board.\n"
        ctx.reply("pbmserv all games", body)
        return f"Running boards of {user.userid} sent."


@command
class Abort(Command):
    name = "abort"
    admin_only = True
    arguments = "GAME BOARD USERID PASSWORD"
    summary = "end a board with no result (admins only)"
    description = "Every player gets the board; the text below the command goes with it."
    min_args = max_args = 4
    password_args = (3,)

    def run(self, ctx: Context, args: list[str]) -> str:
        game_name, board, userid, password = args
        admin = authenticate(ctx, userid, password)
        require_admin(ctx, admin, "abort a board")
        game = get_game(game_name)
        if game is None:
            raise CommandError(f"There is no game '{game_name}'.", "Send 'list' for the games of this server.")
        record = find_game(ctx.session, game.name, int(board)) if board.isdecimal() and len(board) <= 9 else None
        if record is None:
            raise CommandError(f"There is no {game.title} board {board}.", f"Send '{game.name} games' for the boards.")
        if record.status != "active":
            raise CommandError(f"{game.title} board {record.board} is over already: {record.result}",
                               "Only a running board can be aborted.")
        state = current_state(record)
        record.status, record.updated_at = "finished", ctx.now
        record.result = f"Game aborted by {admin.userid}: no result."  # the status line from now on
        refresh_timers(record, state, ctx.now)  # no deadlines on a board that is over
        ctx.notices += board_mails(ctx.config, record, state, [(admin.userid, ctx.comment)], ctx.now)
        ctx.reply("pbmserv abort", f"{game.title} board {record.board} is aborted; "
                                   f"its players ({', '.join(names(record))}) were sent the board.\n",
                  also_to=admin.emails)
        log.info("%s board %d aborted by %s", game.name, record.board, admin.userid)
        return f"{game.title} board {record.board} aborted."


class SetDisabled(Command):
    """`disable` and `enable`: an admin closes or opens an account."""

    admin_only = True
    arguments = "USERID ADMINID PASSWORD"
    min_args = max_args = 3
    password_args = (2,)
    disabled: bool

    def run(self, ctx: Context, args: list[str]) -> str:
        userid, adminid, password = args
        admin = authenticate(ctx, adminid, password)
        require_admin(ctx, admin, f"{self.name} an account")
        user = find_target(ctx, userid, self.usage())
        state = "closed" if self.disabled else "open"
        if user.disabled == self.disabled:
            raise CommandError(f"The account {user.userid} is {state} already.", "Nothing was changed.")
        if user is admin:
            raise CommandError("An admin cannot close their own account.", own_account(ctx, admin))
        user.disabled = self.disabled
        user.reset_token_hash, user.reset_expires = None, None
        if self.disabled:
            told = (f"The account {user.userid} was closed by {admin.userid}, an admin of {ctx.config.server.address}.\n"
                    "Commands with its password are refused until an admin opens it again.\n\n"
                    + ask_admins(ctx, "to open it again", closed=True) + "\n")
        else:
            told = (f"The account {user.userid} was opened again by {admin.userid}, an admin of "
                    f"{ctx.config.server.address}.\nIts password works again.\n")
        ctx.notify(user.emails, f"pbmserv {self.name}", told)
        ctx.reply(f"pbmserv {self.name}", f"The account {user.userid} is {state}; {user.userid} was told.\n",
                  also_to=admin.emails)
        log.info("account %s %sd by %s", user.userid, self.name, admin.userid)
        return f"Account {user.userid} {self.name}d."


@command
class Disable(SetDisabled):
    name = "disable"
    summary = "close an account: its password no longer works (admins only)"
    disabled = True


@command
class Enable(SetDisabled):
    name = "enable"
    summary = "open a closed account again (admins only)"
    disabled = False

"""`GAME match USERID PASSWORD PLAYER PLAYER ... [-NAME=VALUE ...]`: start a board
that the sender does not play.

Anyone may match robots against each other, to watch how they play (the sender
watches the board, as with `subscribe`); the robots play it through at once. They
count against the sender's ROBOT_BOARDS while they run, and against MATCHES_PER_DAY.
Only admins may match people (a tournament's pairings): no one is put on a board by
a stranger. The people on it get the new-board mail and may decline it, as a
challenge.
"""

from __future__ import annotations

import logging

from ..games import Game
from ..play import board_mails, names, start_game
from ..store.repo import rate_limited
from .admin import is_admin
from .base import CommandError, Context, GameCommand, authenticate, command
from .challenges import challenged_notes, check_player_count, check_welcome, named_players
from .game import check_dashes, game_settings
from .observe import watch

log = logging.getLogger(__name__)

# Boards between robots end within the mail that starts them, so ROBOT_BOARDS never
# holds them back: without this, one mail of a thousand `match` lines would cost a
# thousand robot games and their board mails.
MATCHES_PER_DAY = 10


@command
class Match(GameCommand):
    name = "match"
    arguments = "USERID PASSWORD PLAYER PLAYER ... [-NAME=VALUE ...]"
    summary = "start a board between robots to watch (admins: between anyone)"
    description = ("Players sit in the order given; you watch the board, as with 'subscribe'.\n"
                   "Only admins may name people (e.g. a tournament's pairings); they may decline.\n"
                   f"Others may start {MATCHES_PER_DAY} matches a day.")
    min_args, max_args = 4, None
    password_args = (1,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        userid, password, *rest = args
        user = authenticate(ctx, userid, password)
        check_dashes(ctx, game, user, rest, self.name)
        players = named_players(ctx, [word for word in rest if not word.startswith("-")], None)
        check_player_count(game, players, self.usage(game))
        people = [player.userid for player in players if not player.robot]
        admin = is_admin(ctx, user)
        if people and not admin:
            raise CommandError(f"Only admins may start a board between people, and {user.userid} is not one.",
                               f"To play {people[0]}, send: {game.name} challenge {user.userid} PASSWORD "
                               f"{people[0]}")
        if not admin and rate_limited(ctx.session, "match", f"user:{user.userid_key}", ctx.now, MATCHES_PER_DAY):
            raise CommandError(f"{user.userid} started {MATCHES_PER_DAY} matches in the last 24 hours, the most a day.",
                               "Wait a day, then send it again.")
        check_welcome(ctx, game, user, players)
        params, nag, forfeit = game_settings(ctx, game, [word for word in rest if word.startswith("-")],
                                             [player.userid for player in players], self.usage(game),
                                             f"{game.name} match USERID PASSWORD PLAYER PLAYER")
        record, state = start_game(ctx.session, ctx.config, game, players, params, ctx.now, nag, forfeit,
                                   starter=user)
        why = f"{user.userid}, an admin, started this board for you."
        ctx.notices += board_mails(ctx.config, record, state, [(user.userid, ctx.comment)], ctx.now, new=True,
                                   notes=challenged_notes(game, record, state, why))
        if user not in players:  # from now on: this reply is their first board mail
            watch(ctx, game, record, state, user, new=True)
        log.info("%s board %d started by %s for %s", game.name, record.board, user.userid, ", ".join(names(record)))
        return f"New {game.title} board {record.board} started."

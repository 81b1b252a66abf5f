"""`GAME match USERID PASSWORD PLAYER PLAYER ... [-NAME=VALUE ...]`: start a board
that the sender does not play.

Anyone may match robots against each other, to watch how they play (the sender
watches the board, as with `subscribe`); the robots play it through at once, and
count against the sender's ROBOT_BOARDS. Only admins may match people (a
tournament's pairings): no one is put on a board by a stranger. The people on it get
the new-board mail and may decline it, as a challenge.
"""

from __future__ import annotations

import logging

from ..games import Game
from ..play import board_mails, names, start_game
from .admin import is_admin
from .base import CommandError, Context, GameCommand, authenticate, command
from .challenges import challenged_notes, check_player_count, check_welcome, named_players
from .game import check_dashes, game_settings
from .observe import watch

log = logging.getLogger(__name__)


@command
class Match(GameCommand):
    name = "match"
    arguments = "USERID PASSWORD PLAYER PLAYER ... [-NAME=VALUE ...]"
    summary = "start a board between robots to watch (admins: between anyone)"
    description = ("Players sit in the order given; you watch the board, as with 'subscribe'.\n"
                   "Only admins may name people (e.g. a tournament's pairings); they may decline.")
    min_args, max_args = 4, None
    password_args = (1,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        userid, password, *rest = args
        user = authenticate(ctx, userid, password)
        check_dashes(ctx, game, user, rest, self.name)
        players = named_players(ctx, [word for word in rest if not word.startswith("-")], None)
        check_player_count(game, players, self.usage(game))
        people = [player.userid for player in players if not player.robot]
        if people and not is_admin(ctx, user):
            raise CommandError(f"Only admins may start a board between people, and {user.userid} is not one.",
                               f"To play {people[0]}, send: {game.name} challenge {user.userid} PASSWORD "
                               f"{people[0]}")
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

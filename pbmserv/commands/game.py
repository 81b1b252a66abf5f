"""Game commands, written after a game's name: help, challenge, move, show, showas,
resign, games."""

from __future__ import annotations

import re

from ..clocks import clock_params
from ..games import Game
from ..games.base import echoed
from ..mail.text import fit
from ..play import current_state, names, next_move, replay, show_board, start_game, status_line, subject
from ..render import render
from ..store.repo import find_user, running_of_type
from ..store.movelog import log_of
from .account import game_help
from .base import CommandError, Context, GameCommand, authenticate, command
from .boards import load_board, load_player, resign, send_boards
from .challenges import challenged_notes, check_player_count, check_welcome, named_players
from .votes import move_or_vote

GAMES_LISTED = 100  # boards in a `games` reply: a big server has thousands running
GUARD = re.compile(r"^(?P<move>.*?)\s*#(?P<number>\d+)$", re.DOTALL)
MOVE_SHOWN = 30  # a longer move (a Survive 'say') is echoed cut, and written MOVE in the line to send


@command
class GameHelp(GameCommand):
    name = "help"
    summary = "the rules of the game and how to write a move"

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        ctx.reply(f"{game.title} help", game_help(ctx.config, game))
        return f"Help on {game.name} sent."


@command
class Challenge(GameCommand):
    name = "challenge"
    arguments = "USERID PASSWORD OPPONENT ... [-NAME=VALUE ...]"
    summary = "start a game at once; you take the first seat"
    description = "Players sit in the order given. Parameters are listed in 'GAME help'."
    min_args, max_args = 3, None
    password_args = (1,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        userid, password, *rest = args
        user = authenticate(ctx, userid, password)
        check_dashes(ctx, game, user, rest, self.name)
        players = named_players(ctx, [word for word in rest if not word.startswith("-")], user)
        check_player_count(game, players, self.usage(game))
        check_welcome(ctx, game, user, players[1:])  # opponents who refuse or are at their limit
        words = [word for word in rest if word.startswith("-")]
        params, nag, forfeit = game_settings(ctx, game, words, [player.userid for player in players],
                                             self.usage(game), f"{game.name} challenge USERID PASSWORD OPPONENT")
        record, state = start_game(ctx.session, ctx.config, game, players, params, ctx.now, nag, forfeit)
        send_boards(ctx, record, state, user, [(user.userid, ctx.comment)], new=True,
                    notes=challenged_notes(game, record, state))
        return f"New {game.title} board {record.board} started."


def check_dashes(ctx: Context, game: Game, user, words: list[str], name: str) -> None:
    """A parameter written without its '-' (`size=4`) would be read as a userid (or
    a number of players): `name` is the command's (`challenge`, `seek`)."""
    known = {param.name for param in game.params + clock_params(ctx.config, game)}
    bare = [word for word in words if "=" in word and not word.startswith("-")
            and word.partition("=")[0].lower() in known]
    if bare:
        fixed = " ".join(f"-{word}" if word in bare else word for word in words)
        raise CommandError(fit(f"Parameters start with '-': {', '.join(f'-{word}' for word in bare)}"),
                           fit(f"Send: {game.name} {name} {user.userid} PASSWORD {fixed}"))


def parse_params(ctx: Context, game: Game, words: list[str], players: list[str], usage: str,
                 plain: str) -> dict[str, int]:
    """The engine's parameters and the server's deadlines (`nagtime`, `forfeittime`)
    of the `-name=value` `words`; `players` are the userids by seat so far, `usage`
    the command's usage line and `plain` the command written without parameters,
    for the errors."""
    params = game.params + clock_params(ctx.config, game)
    known = {param.name: param for param in params}
    values = {param.name: param.default for param in params}
    for word in words:
        name, equals, value = word[1:].partition("=")
        param = known.get(name.lower())
        if not known:
            raise CommandError(f"{game.title} takes no parameters, so '{word}' cannot be used.",
                               f"Send: {plain}")
        if param is None or not equals:
            accepted = ", ".join(f"-{p.name}={p.placeholder}" for p in params)
            raise CommandError(f"{game.title} has no parameter '{word}'.",
                               f"Parameters of {game.title}: {accepted}. Send '{game.name} help' for their meaning.")
        try:
            values[param.name] = param.parse(value, players)
        except ValueError as error:
            raise CommandError(f"{error}.", f"Send: {usage}") from None
    return values


def game_settings(ctx: Context, game: Game, words: list[str], players: list[str], usage: str,
                  plain: str) -> tuple[dict[str, int], int, int]:
    """What `challenge` and `seek` read from their `-name=value` words: the engine's
    parameters, and the nag and forfeit times in seconds (0: none). A short
    -forfeittime alone brings the reminder a third of the way to it."""
    params = parse_params(ctx, game, words, players, usage, plain)
    nag, forfeit = params.pop("nagtime", 0), params.pop("forfeittime", 0)
    if nag and forfeit and nag >= forfeit and not any(w.lower().startswith("-nagtime=") for w in words):
        nag = forfeit // 3  # a short -forfeittime alone: the reminder comes a third of the way
    if nag and forfeit and nag >= forfeit:
        raise CommandError("-nagtime must be shorter than -forfeittime: the reminder comes before the forfeit.",
                           f"Send e.g.: {plain} -nagtime=7d -forfeittime=21d")
    return params, nag, forfeit


@command
class MoveCommand(GameCommand):
    name = "move"
    arguments = "BOARD USERID PASSWORD MOVE [#N]"
    summary = "make your move, or vote (#N: only if it is the N-th move on the board)"
    description = ("The #N guard keeps a re-sent or stale mail from playing twice; every board\n"
                   "mail says the number its next move takes (Next move: #N).\n\n"
                   "In the games that allow votes, MOVE may also be:\n"
                   "  propose  propose a draw (games that can end in a tie)\n"
                   "  undo     propose to take back your last move and every move after it\n"
                   "           (games without chance or hidden information)\n"
                   "  accept   agree to the vote another player proposed\n"
                   "  reject   refuse it: the vote is cancelled\n"
                   "A vote passes once every other player accepts; a reject, or a move by\n"
                   "anyone, cancels it. One vote at a time; the board mails show it.")
    min_args, max_args = 4, None
    password_args = (2,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        board, userid, password, *words = args
        record, user, seat = load_player(ctx, game, board, userid, password, running=True)
        text = " ".join(words)
        guard = GUARD.match(text)
        if guard and not guard["move"]:
            raise CommandError("The move is missing: only the #N guard came after the password.",
                               f"Send: {self.usage(game)}", board=record, viewer=user)
        if guard:
            text = guard["move"]
            if f"#{int(guard['number'])}" != next_move(record):
                shown = text if len(text) <= MOVE_SHOWN else "MOVE"
                raise CommandError(
                    fit(f"Move {echoed(text, MOVE_SHOWN)} received as move #{int(guard['number'])}, but the next move "
                        f"on board {record.board} is {next_move(record)}."),
                    fit(f"Look at the board below. If {'it' if shown == 'MOVE' else shown} is still your move, send:\n"
                        f"  {game.name} move {record.board} {user.userid} PASSWORD {shown} {next_move(record)}"),
                    board=record, viewer=user)
        return move_or_vote(ctx, game, record, user, seat, text)


@command
class Show(GameCommand):
    name = "show"
    arguments = "BOARD[#N] [legal]"
    summary = "the board as all see it (#N: after N moves; legal: the legal moves)"
    min_args, max_args = 1, 3

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        words = " ".join(args)
        match = re.fullmatch(r"(?P<board>\S+?)\s*(?:#(?P<n>\d+))?(?P<legal>\s+legal)?", words, re.IGNORECASE)
        if match is None:
            raise CommandError(f"'{words}' is not a board to show.", f"Send: {self.usage(game)}, e.g. {game.name} show 101#3 legal")
        record = load_board(ctx, game, match["board"])
        upto = None
        if match["n"] is not None:
            upto = int(match["n"])
            if upto > len(log_of(record)):
                raise CommandError(f"Board {record.board} has had {len(log_of(record))} moves, so there is no position after move {upto}.",
                                   f"Send: {game.name} show {record.board}#N with N from 0 to {len(log_of(record))}.", board=record)
        state = replay(record, upto) if upto is not None else current_state(record)
        shown = show_board(ctx.config, record, state, None, ctx.now, upto=upto)
        body = shown.text
        if match["legal"]:
            body += render("legal.txt", lines=[(names(record)[seat], game.legal_moves(state, seat), game.syntax_now(state, seat))
                                               for seat in sorted(game.to_act(state))])
        ctx.reply(subject(record, current_state(record)), body, boards=[shown])  # what the board is now
        return f"{game.title} board {record.board} sent."


@command
class ShowAs(GameCommand):
    name = "showas"
    arguments = "BOARD USERID PASSWORD"
    summary = "the board as you see it, with what only you may see"
    min_args = max_args = 3
    password_args = (2,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        board, userid, password = args
        record, user, seat = load_player(ctx, game, board, userid, password)
        state = current_state(record)
        shown = show_board(ctx.config, record, state, seat, ctx.now)
        ctx.reply(subject(record, state), shown.text, boards=[shown])
        return f"{game.title} board {record.board} sent as {user.userid} sees it."


@command
class Resign(GameCommand):
    name = "resign"
    arguments = "BOARD USERID PASSWORD"
    summary = "give up the game"
    min_args = max_args = 3
    password_args = (2,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        board, userid, password = args
        record, user, seat = load_player(ctx, game, board, userid, password, running=True)
        resign(ctx, record, user, seat)
        return f"{user.userid} resigned on {game.title} board {record.board}."


@command
class Games(GameCommand):
    name = "games"
    arguments = "[USERID]"
    summary = "the running boards of this game (or of a player) and whose turn it is"
    description = ("At most the first 100 are listed. Finished boards: 'GAME history [USERID]'.")
    max_args = 1

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        user = None
        if args:
            user = find_user(ctx.session, args[0])
            if user is None:
                raise CommandError(f"There is no user {args[0]}.", f"Send: {self.usage(game)}")
        total, records = running_of_type(ctx.session, game.name, user, GAMES_LISTED)
        rows = [(r.board, ", ".join(names(r)), status_line(r, current_state(r))) for r in records]
        ctx.reply(f"{game.title} games", render("commands/games.txt", game=game, user=user, rows=rows, total=total))
        return f"List of {game.title} boards sent."

"""Game commands, written after a game's name: help, challenge, move, show, showas,
resign, games."""

from __future__ import annotations

import re

from ..clocks import clock_params
from ..games import Game, State
from ..games.base import fill_seats, seats_for_names
from ..play import (board_mails, board_text, current_state, names, record_action, replay, seat_of,
                    start_game, status_line, subject)
from ..store.models import GameRecord, User
from ..store.repo import find_game, find_user, games_of_type
from ..render import render
from .account import game_help
from .base import CommandError, Context, GameCommand, authenticate, command

GUARD = re.compile(r"^(?P<move>.*?)\s*#(?P<number>\d+)$", re.DOTALL)


def board_number(text: str, game: Game) -> int:
    if not text.isdigit() or len(text) > 9:
        raise CommandError(f"'{text}' is not a board number.",
                           f"Board numbers are whole numbers such as 101; send '{game.name} games' for the boards.")
    return int(text)


def load_board(ctx: Context, game: Game, text: str) -> GameRecord:
    record = find_game(ctx.session, game.name, board_number(text, game))
    if record is None:
        raise CommandError(f"There is no {game.title} board {text}.",
                           f"Send '{game.name} games' for the boards.")
    ctx.board = record
    return record


def load_player(ctx: Context, game: Game, board: str, userid: str, password: str) -> tuple[GameRecord, User, int]:
    """The board, the authenticated user and their seat on it, or the error saying which is wrong."""
    record = load_board(ctx, game, board)
    user = authenticate(ctx, userid, password)
    seat = seat_of(record, user)
    if seat is None:
        raise CommandError(
            f"{user.userid} does not play on {game.title} board {record.board}; its players are {', '.join(names(record))}.",
            "Check the board number and the userid.", board=record)
    return record, user, seat


def check_active(record: GameRecord, game: Game, user: User) -> None:
    if record.status != "active":
        raise CommandError(f"{game.title} board {record.board} is over: {record.result}",
                           f"Start a new game with: {game.name} challenge USERID PASSWORD OPPONENT",
                           board=record, viewer=user)


def send_boards(ctx: Context, record: GameRecord, state: State, actor: User, comments: list[tuple[str, str]],
                new: bool = False, note: str = "", private: frozenset[int] | None = None) -> None:
    """Board mails to every player; the actor's copy also to the address the command
    came from."""
    ctx.notices += board_mails(ctx.config, record, state, comments, ctx.now, new=new, note=note, private=private,
                               extra={seat_of(record, actor): ctx.mail.reply_to})


def resign(ctx: Context, record: GameRecord, user: User, seat: int) -> None:
    """Log `user`'s resignation on a running board and mail every player the result."""
    state = current_state(record)
    record_action(ctx.session, record, state, seat, "resign", "resign", ctx.comment, ctx.now, ctx.inbound_id)
    send_boards(ctx, record, state, user, [(user.userid, ctx.comment)], note=f"{user.userid} resigned.")


LISTED_MOVES = 24  # more legal moves than this are summarised, not listed in an error


def legal_hint(game: Game, record: GameRecord, state: State, seat: int) -> str:
    moves = game.legal_moves(state, seat)
    if moves and len(moves) <= LISTED_MOVES:
        return f"MOVE is one of: {', '.join(moves)}."
    hint = f"MOVE is {game.move_syntax}"
    if moves:
        hint += f" ({len(moves)} legal moves: send '{game.name} show {record.board} legal' for the list)"
    return hint


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
        opponent_ids = [word for word in rest if not word.startswith("-")]
        players = [user]
        for name in opponent_ids:
            opponent = find_user(ctx.session, name)
            if opponent is None:
                raise CommandError(f"There is no user {name}.", "Check the spelling of your opponents' userids.")
            if opponent is user:
                raise CommandError("You cannot challenge yourself.", "Name your opponents' userids after your password.")
            if opponent in players:
                raise CommandError(f"{opponent.userid} is named twice.", "Name each player once.")
            players.append(opponent)
        if not game.min_players <= len(players) <= game.max_players:
            count = str(game.min_players) if game.min_players == game.max_players else f"{game.min_players} to {game.max_players}"
            raise CommandError(f"{game.title} is played by {count} players, not {len(players)}.",
                               f"Send: {self.usage(game)}")
        words = [word for word in rest if word.startswith("-")]
        params = self.parse_params(ctx, game, words, [player.userid for player in players])
        nag, forfeit = params.pop("nagtime", 0), params.pop("forfeittime", 0)
        if nag and forfeit and nag >= forfeit and not any(w.lower().startswith("-nagtime=") for w in words):
            nag = forfeit // 3  # a short -forfeittime alone: the reminder comes a third of the way
        if nag and forfeit and nag >= forfeit:
            raise CommandError("-nagtime must be shorter than -forfeittime: the reminder comes before the forfeit.",
                               f"Send e.g.: {game.name} challenge USERID PASSWORD OPPONENT -nagtime=7d -forfeittime=21d")
        record, state = start_game(ctx.session, ctx.config, game, players, params, ctx.now, nag, forfeit)
        send_boards(ctx, record, state, user, [(user.userid, ctx.comment)], new=True)
        return f"New {game.title} board {record.board} started."

    def parse_params(self, ctx: Context, game: Game, words: list[str], players: list[str]) -> dict[str, int]:
        """The engine's parameters and the server's deadlines (`nagtime`, `forfeittime`)."""
        params = game.params + clock_params(ctx.config, game)
        known = {param.name: param for param in params}
        values = {param.name: param.default for param in params}
        for word in words:
            name, equals, value = word[1:].partition("=")
            param = known.get(name.lower())
            if not known:
                raise CommandError(f"{game.title} takes no parameters, so '{word}' cannot be used.",
                                   f"Send: {game.name} challenge USERID PASSWORD OPPONENT")
            if param is None or not equals:
                accepted = ", ".join(f"-{p.name}={p.placeholder}" for p in params)
                raise CommandError(f"{game.title} has no parameter '{word}'.",
                                   f"Parameters of {game.title}: {accepted}. Send '{game.name} help' for their meaning.")
            try:
                values[param.name] = param.parse(value, players)
            except ValueError as error:
                raise CommandError(f"{error}.", f"Send: {self.usage(game)}") from None
        return values


@command
class MoveCommand(GameCommand):
    name = "move"
    arguments = "BOARD USERID PASSWORD MOVE [#N]"
    summary = "make your move (#N: only if it is the N-th move on the board)"
    description = "The #N guard keeps a re-sent or stale mail from playing twice."
    min_args, max_args = 4, None
    password_args = (2,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        board, userid, password, *words = args
        record, user, seat = load_player(ctx, game, board, userid, password)
        check_active(record, game, user)
        text = " ".join(words)
        guard = GUARD.match(text)
        if guard and not guard["move"]:
            raise CommandError("The move is missing: only the #N guard came after the password.",
                               f"Send: {self.usage(game)}", board=record, viewer=user)
        next_number = len(record.moves) + 1
        if guard:
            text = guard["move"]
            if int(guard["number"]) != next_number:
                raise CommandError(
                    f"Move {text} received as move #{int(guard['number'])}, but the next move on board {record.board} is #{next_number}.",
                    "Look at the board below, then send your move again with the right number or none.",
                    board=record, viewer=user)
        if game.names_in_moves:
            text = seats_for_names(text, names(record))
        state = current_state(record)
        if seat not in game.to_act(state):
            raise CommandError(f"It is not {user.userid}'s turn on board {record.board}. {status_line(record, state)}",
                               "Wait for the board mail that says it is your turn.", board=record, viewer=user)
        verdict = game.check(state, seat, text)
        if not verdict.ok:
            reason = fill_seats(verdict.error, names(record)).rstrip(".")
            raise CommandError(f"Move {text} is not legal on board {record.board}: {reason}.",
                               f"Send instead: {game.name} move {record.board} {user.userid} PASSWORD MOVE\n"
                               f"where {legal_hint(game, record, state, seat)}", board=record, viewer=user)
        private = game.private_to(state, seat, verdict.move)  # asked before the move changes the state
        record_action(ctx.session, record, state, seat, "move", verdict.move, ctx.comment, ctx.now, ctx.inbound_id)
        send_boards(ctx, record, state, user, [(user.userid, ctx.comment)], private=private)
        return f"Move {verdict.move} played on {game.title} board {record.board}."


@command
class Show(GameCommand):
    name = "show"
    arguments = "BOARD[#N] [legal]"
    summary = "the board as everyone sees it (#N: after N moves; legal: the legal moves)"
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
            if upto > len(record.moves):
                raise CommandError(f"Board {record.board} has had {len(record.moves)} moves, so there is no position after move {upto}.",
                                   f"Send: {game.name} show {record.board}#N with N from 0 to {len(record.moves)}.", board=record)
        state = replay(record, upto) if upto is not None else current_state(record)
        body = board_text(ctx.config, record, state, None, ctx.now, upto=upto)
        if match["legal"]:
            body += render("legal.txt", lines=[(names(record)[seat], game.legal_moves(state, seat), game.move_syntax)
                                               for seat in sorted(game.to_act(state))])
        ctx.reply(subject(record, current_state(record)), body)  # what the board is now
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
        ctx.reply(subject(record, state), board_text(ctx.config, record, state, seat, ctx.now))
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
        record, user, seat = load_player(ctx, game, board, userid, password)
        check_active(record, game, user)
        resign(ctx, record, user, seat)
        return f"{user.userid} resigned on {game.title} board {record.board}."


@command
class Games(GameCommand):
    name = "games"
    arguments = "[USERID]"
    summary = "the boards of this game, their players and status"
    max_args = 1

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        user = None
        if args:
            user = find_user(ctx.session, args[0])
            if user is None:
                raise CommandError(f"There is no user {args[0]}.", f"Send: {self.usage(game)}")
        records = games_of_type(ctx.session, game.name, user)
        rows = [(r.board, ", ".join(names(r)), status_line(r, current_state(r))) for r in records]
        ctx.reply(f"{game.title} games", render("commands/games.txt", game=game, user=user, rows=rows))
        return f"List of {game.title} boards sent."

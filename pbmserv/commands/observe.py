"""Observers and talk on a board: subscribe, unsubscribe, chat.

Observers get every board mail of the board as the public sees it (`play.board_mails`);
chat reaches the players and the observers.
"""

from __future__ import annotations

from ..games import Game, get_game
from ..mail.text import fit
from ..play import current_state, seat_of, show_board, subject
from ..render import render
from ..store.models import GameRecord, Subscription, User
from .account import relay_text
from .base import CommandError, Context, GameCommand, authenticate, command, relay_replier, relay_reply_address
from .boards import load_board


def subscription(record: GameRecord, user: User) -> Subscription | None:
    return next((sub for sub in record.subscriptions if sub.user_id == user.id), None)


def watcher(ctx: Context, game: Game, args: list[str]) -> tuple[GameRecord, User]:
    """The board and the authenticated user of a BOARD USERID PASSWORD command."""
    board, userid, password = args
    record = load_board(ctx, game, board)
    return record, authenticate(ctx, userid, password)


def watch(ctx: Context, game: Game, record: GameRecord, state, user: User, new: bool = False) -> None:
    """Subscribe `user` to the board, and answer with the board as everyone sees it."""
    record.subscriptions.append(Subscription(user=user))
    shown = show_board(ctx.config, record, state, None, ctx.now)
    ctx.reply(subject(record, state, new=new),
              f"You watch {game.title} board {record.board} now: every board mail of it comes to you too.\n"
              f"To stop, send: {game.name} unsubscribe {record.board} {user.userid} PASSWORD\n\n"
              + shown.text, also_to=user.emails, boards=[shown])


@command
class Subscribe(GameCommand):
    name = "subscribe"
    arguments = "BOARD USERID PASSWORD"
    summary = "watch a board: its board mails, as everyone sees them, come to you too"
    min_args = max_args = 3
    password_args = (2,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        record, user = watcher(ctx, game, args)
        if seat_of(record, user) is not None:
            raise CommandError(f"{user.userid} plays on {game.title} board {record.board} and gets its board mails already.",
                               f"Send '{game.name} games' for the boards you could watch.")
        if record.status != "active":
            raise CommandError(f"{game.title} board {record.board} is over: {record.result}",
                               f"Send '{game.name} games' for the running boards you could watch.", board=record)
        if subscription(record, user) is not None:
            raise CommandError(f"{user.userid} watches {game.title} board {record.board} already.",
                               f"To stop, send: {game.name} unsubscribe {record.board} {user.userid} PASSWORD")
        watch(ctx, game, record, current_state(record), user)
        return f"{user.userid} watches {game.title} board {record.board}."


@command
class Unsubscribe(GameCommand):
    name = "unsubscribe"
    arguments = "BOARD USERID PASSWORD"
    summary = "stop watching a board"
    min_args = max_args = 3
    password_args = (2,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        record, user = watcher(ctx, game, args)
        found = subscription(record, user)
        if found is None:
            raise CommandError(f"{user.userid} does not watch {game.title} board {record.board}.",
                               f"To watch it, send: {game.name} subscribe {record.board} {user.userid} PASSWORD")
        record.subscriptions.remove(found)
        ctx.reply("pbmserv unsubscribe", f"You no longer watch {game.title} board {record.board}.\n", also_to=user.emails)
        return f"{user.userid} no longer watches {game.title} board {record.board}."


@command
class Chat(GameCommand):
    name = "chat"
    arguments = "BOARD USERID PASSWORD"
    summary = "send the text below the command to the players and observers of a board"
    min_args = max_args = 3
    password_args = (2,)
    takes_text = True

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        record, user = watcher(ctx, game, args)
        if seat_of(record, user) is None and subscription(record, user) is None:
            raise CommandError(f"Only the players and observers of {game.title} board {record.board} may chat on it, "
                               f"and {user.userid} is neither.",
                               f"To watch it first, send: {game.name} subscribe {record.board} {user.userid} PASSWORD")
        return send_chat(ctx, game, record, user, relay_text(ctx, self.usage(game)))


def send_chat(ctx: Context, game: Game, record: GameRecord, user: User, text: str) -> str:
    """Relay `text` from `user` to the other players and observers of the board; each
    copy's Reply-To makes an answer chat on the same board."""
    readers = [seat.user for seat in record.seats] + [sub.user for sub in record.subscriptions]
    others = [reader for reader in readers if reader.id != user.id and not reader.disabled]
    body = render("commands/chat.txt", sender=user.userid, title=game.title, game=game.name,
                  board=record.board, text=text)
    for reader in others:
        ctx.notify(reader.emails, f"Chat: {game.title} Board {record.board} {user.userid}", body,
                   reply_to=relay_reply_address(ctx, "h", reader, record.id))
    sent_to = ", ".join(reader.userid for reader in others) or "nobody: no one else on the board can read it"
    ctx.reply("pbmserv chat", f"Your chat on {game.title} board {record.board} was sent to {sent_to}.\n",
              also_to=user.emails)
    return f"Chat sent to {sent_to}."


def answer_chat(ctx: Context, payload: str, given_mac: str) -> str:
    """A reply to a chat mail (`pbmserv+h-READER.GAMEID-MAC`) is chat on that board from
    the reader, while the reader still plays on or watches it."""
    reader, record_id = relay_replier(ctx, "h", payload, given_mac, "chat")
    record = ctx.session.get(GameRecord, record_id)
    game = get_game(record.game_type) if record is not None else None
    if game is None:
        raise CommandError("That board is gone.", "Send 'help' for the commands.")
    ctx.game = game
    if seat_of(record, reader) is None and subscription(record, reader) is None:
        raise CommandError(fit(f"{reader.userid} no longer plays on or watches {game.title} board {record.board}, "
                               "so cannot chat on it."),
                           f"To watch it again, send: {game.name} subscribe {record.board} {reader.userid} PASSWORD")
    return send_chat(ctx, game, record, reader, relay_text(ctx))

"""What the commands about one board share: finding it and its player, playing a
move, resigning, and mailing the boards."""

from __future__ import annotations

from ..games import Game, State
from ..games.base import fill_seats, seats_for_names
from ..mail.outbound import Mail
from ..mail.text import fit
from ..play import (board_mails, current_state, names, record_action, seat_of, show_board, status_line, subject)
from ..replyto import reply_address
from ..store.models import GameRecord, User
from ..store.repo import find_game
from .base import CommandError, Context, authenticate


def board_number(text: str, game: Game) -> int:
    if not text.isdecimal() or len(text) > 9:
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


def load_player(ctx: Context, game: Game, board: str, userid: str, password: str,
                running: bool = False) -> tuple[GameRecord, User, int]:
    """The board, the authenticated user and their seat on it (on a board still
    `running`, if asked), or the error saying which is wrong."""
    record = load_board(ctx, game, board)
    user = authenticate(ctx, userid, password, among=[seat.user for seat in record.seats])
    seat = seat_of(record, user)
    if seat is None:
        raise CommandError(
            f"{user.userid} does not play on {game.title} board {record.board}; its players are {', '.join(names(record))}.",
            "Check the board number and the userid.", board=record)
    if running:
        check_active(record, game, user)
    return record, user, seat


def check_active(record: GameRecord, game: Game, user: User) -> None:
    if record.status != "active":
        raise CommandError(f"{game.title} board {record.board} is over: {record.result}",
                           f"Start a new game with: {game.name} challenge USERID PASSWORD OPPONENT",
                           board=record, viewer=user)


def send_boards(ctx: Context, record: GameRecord, state: State, actor: User, comments: list[tuple[str, str]],
                new: bool = False, note: str = "", private: frozenset[int] | None = None,
                notes: dict[int, str] | None = None) -> None:
    """Board mails to every player (`notes[seat]` to that seat alone); the actor's
    copy also to the address the command came from."""
    ctx.notices += board_mails(ctx.config, record, state, comments, ctx.now, new=new, note=note, private=private,
                               extra={seat_of(record, actor): ctx.mail.reply_to}, notes=notes)


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
    hint = f"MOVE is {game.syntax_now(state, seat)}"
    if moves:  # an example that is legal here, not the syntax's, whose cell may be taken
        hint += (f" ({len(moves)} legal moves, such as {moves[0]}: send '{game.name} show {record.board} legal' "
                 "for the list)")
    return hint


def checked_move(ctx: Context, game: Game, record: GameRecord, user: User, seat: int, text: str) -> tuple[State, str]:
    """The position and the move `text` in its canonical form, or the error saying
    why `user` cannot play it now."""
    if game.names_in_moves:
        text = seats_for_names(text, names(record))
    state = current_state(record)
    if seat not in game.to_act(state):
        raise CommandError(f"It is not {user.userid}'s turn on board {record.board}. {status_line(record, state)}",
                           "Wait for the board mail that says it is your turn.", board=record, viewer=user)
    verdict = game.check(state, seat, text)
    if not verdict.ok:
        reason = fill_seats(verdict.error, names(record)).rstrip(".")
        raise CommandError(fit(f"Move {fill_seats(text, names(record))} is not legal on board {record.board}: {reason}."),
                           fit(f"Send instead: {game.name} move {record.board} {user.userid} PASSWORD MOVE\n"
                               f"where {legal_hint(game, record, state, seat)}"), board=record, viewer=user)
    return state, verdict.move


def play_move(ctx: Context, game: Game, record: GameRecord, user: User, seat: int, text: str,
              note: str = "") -> str:
    """Check and play `user`'s move, and mail every player the board (with `note`)."""
    state, move = checked_move(ctx, game, record, user, seat, text)
    private = game.private_to(state, seat, move)  # asked before the move changes the state
    record_action(ctx.session, record, state, seat, "move", move, ctx.comment, ctx.now, ctx.inbound_id)
    stale = [p for p in record.pending if p.seat == seat and p.kind == "submit"]  # a submitted move: now stale
    if stale:
        record.pending = [p for p in record.pending if p not in stale]
    send_boards(ctx, record, state, user, [(user.userid, ctx.comment)], note=note, private=private)
    play_queued(ctx, game, record)
    return f"Move {move} played on {game.title} board {record.board}."


def play_queued(ctx: Context, game: Game, record: GameRecord) -> None:
    """Play the queued moves (`GAME queue`) whose turn has come, one after another:
    each if it is legal now, marked (auto); if not, its player is told and it is
    dropped."""
    while record.status == "active":
        state = current_state(record)
        waiting = game.to_act(state)
        pending = next((p for p in record.pending if p.kind == "queue" and p.seat in waiting), None)
        if pending is None:
            return
        record.pending.remove(pending)
        user = record.seats[pending.seat].user
        verdict = game.check(state, pending.seat, pending.move)
        if not verdict.ok:
            reason = fill_seats(verdict.error, names(record)).rstrip(".")
            note = (f"Your queued move {fill_seats(pending.move, names(record))} could not be played: {reason}. "
                    "It is your turn: send your move.")
            shown = show_board(ctx.config, record, state, pending.seat, ctx.now, note=note)
            ctx.notices.append(Mail(user.emails, subject(record, state), shown.text,
                                    reply_address(ctx.config, record, pending.seat), [shown]))
            continue
        private = game.private_to(state, pending.seat, verdict.move)
        record_action(ctx.session, record, state, pending.seat, "move", verdict.move, pending.comment, ctx.now,
                      ctx.inbound_id, auto=True)
        ctx.notices += board_mails(ctx.config, record, state, [(user.userid, pending.comment)], ctx.now,
                                   note=f"{user.userid}'s queued move was played (auto).", private=private)


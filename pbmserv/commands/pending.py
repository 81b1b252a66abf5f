"""Move helpers: queue a move for one's next turn, preview moves, submit a move and
confirm it later.

- `queue`: kept on the board (`PendingMove`, kind "queue") and played by
  `boards.play_queued` as soon as the player's turn comes, if legal then; one per
  player and board, a new one replaces it, `cancel` removes it, and a move made by
  hand (`move`, `confirm`) drops it.
- `preview`: the board after a few moves (separated by `;`), each by the player to
  act (the sender, where several act at once). Nothing is stored; chance in a preview
  is drawn anew, never the board's real next outcome. Needs the password because a
  player's view may hold what others may not see.
- `submit` checks a move and shows the board after it; `confirm` plays it.
"""

from __future__ import annotations

from ..games import Game, State
from ..games.base import fill_seats, seats_for_names
from ..play import current_state, names, seeded_rng, show_board, subject
from ..store.models import GameRecord, PendingMove, User
from .base import CommandError, Context, GameCommand, command
from .boards import checked_move, load_player, play_move

CANCEL = "cancel"


def pending_of(record: GameRecord, seat: int, kind: str) -> PendingMove | None:
    return next((p for p in record.pending if p.seat == seat and p.kind == kind), None)


def drop_queued(record: GameRecord, seat: int) -> None:
    """The seat moves by hand: its queued move, meant for a turn that is now being
    played, is dropped (an illegal move undoes this with the command's savepoint)."""
    queued = pending_of(record, seat, "queue")
    if queued is not None:
        record.pending.remove(queued)


def refuse_idle(game: Game, record: GameRecord, user: User, seat: int) -> None:
    """Refuse a move from a seat that has nothing to do now, in the game's own words
    (`idle_reason`: Survive speaks of phases, not turns); other games are left to
    `boards.checked_move`."""
    reason = getattr(game, "idle_reason", None)
    state = current_state(record)
    if reason is not None and seat not in game.to_act(state):
        problem, instead = reason(state, seat)
        raise CommandError(fill_seats(problem, names(record)), fill_seats(instead, names(record)),
                           board=record, viewer=user)


def keep(record: GameRecord, seat: int, kind: str, move: str, ctx: Context) -> None:
    """Store `move` as the seat's pending move of `kind`, replacing an earlier one."""
    old = pending_of(record, seat, kind)
    if old is None:
        record.pending.append(PendingMove(seat=seat, kind=kind, move=move, comment=ctx.comment, created_at=ctx.now))
    else:  # updated in place: a delete and an insert in one flush would meet the unique key
        old.move, old.comment, old.created_at = move, ctx.comment, ctx.now


def previewed(ctx: Context, game: Game, record: GameRecord, user: User, seat: int, moves: list[str]) -> State:
    """The position after `moves`, each checked; the real board is not touched. What
    the sender cannot see (a deck's order, others' sealed orders) is made up first."""
    rng = seeded_rng(record.seed, "preview", ctx.inbound_id)
    state = game.resample_hidden(current_state(record), seat, rng)
    for number, text in enumerate(moves, start=1):
        acting = game.to_act(state)
        if not acting:
            raise CommandError(f"The game would be over before preview move {number} ({text}).",
                               "Preview fewer moves.", board=record, viewer=user)
        mover = seat if seat in acting else min(acting)
        if game.names_in_moves:
            text = seats_for_names(text, names(record))
        verdict = game.check(state, mover, text)
        if not verdict.ok:
            reason = fill_seats(verdict.error, names(record)).rstrip(".")
            raise CommandError(f"Preview move {number} ({fill_seats(text, names(record))}, by {names(record)[mover]}) "
                               f"is not legal: {reason}.", "Correct that move and send the preview again.",
                               board=record, viewer=user)
        game.apply(state, mover, verdict.move, game.draw(state, mover, verdict.move, rng))
    return state


@command
class Queue(GameCommand):
    name = "queue"
    arguments = "BOARD USERID PASSWORD MOVE|cancel"
    summary = "a move played for you when your turn comes, if it is legal then"
    min_args, max_args = 4, None
    password_args = (2,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        board, userid, password, *words = args
        record, user, seat = load_player(ctx, game, board, userid, password, running=True)
        text = " ".join(words)
        if text.lower() == CANCEL:
            queued = pending_of(record, seat, "queue")
            if queued is None:
                raise CommandError(f"{user.userid} has no queued move on board {record.board}.",
                                   f"To queue one, send: {self.usage(game)}")
            record.pending.remove(queued)
            ctx.reply(f"{game.title} Board {record.board} queue", f"Your queued move on board {record.board} was removed.\n",
                      also_to=user.emails)
            return f"Queued move on {game.title} board {record.board} removed."
        if seat in game.to_act(current_state(record)):
            raise CommandError(f"It is {user.userid}'s turn on board {record.board} now, so there is nothing to queue.",
                               f"Send the move itself: {game.name} move {record.board} {user.userid} PASSWORD {text}",
                               board=record, viewer=user)
        keep(record, seat, "queue", seats_for_names(text, names(record)) if game.names_in_moves else text, ctx)
        ctx.reply(f"{game.title} Board {record.board} queue",
                  f"Queued on {game.title} board {record.board}: {text}\n"
                  "It is played for you when your turn comes, if it is legal then; otherwise you are told.\n"
                  f"A new queue command replaces it; to remove it, send: "
                  f"{game.name} queue {record.board} {user.userid} PASSWORD cancel\n", also_to=user.emails)
        return f"Move {text} queued on {game.title} board {record.board}."


@command
class Preview(GameCommand):
    name = "preview"
    arguments = "BOARD USERID PASSWORD MOVE[; MOVE ...]"
    summary = "the board as it would be after these moves; nothing is played"
    description = ("Each move is by the player to act then. Chance in a preview is made up: it never\n"
                   "shows the board's real next roll or card.")
    min_args, max_args = 4, None
    password_args = (2,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        board, userid, password, *words = args
        record, user, seat = load_player(ctx, game, board, userid, password, running=True)
        moves = [move.strip() for move in " ".join(words).split(";") if move.strip()]
        if not moves:
            raise CommandError("There are no moves to preview.", f"Send: {self.usage(game)}")
        state = previewed(ctx, game, record, user, seat, moves)
        note = f"Preview after {'; '.join(moves)}: nothing was played."
        shown = show_board(ctx.config, record, state, seat, ctx.now, note=note, hypothetical=True)
        ctx.reply(f"Preview: {subject(record, current_state(record))}", shown.text, also_to=user.emails,
                  boards=[shown])
        return f"Preview of {game.title} board {record.board} sent."


@command
class Submit(GameCommand):
    name = "submit"
    arguments = "BOARD USERID PASSWORD MOVE"
    summary = "check a move and see the board after it; confirm plays it"
    min_args, max_args = 4, None
    password_args = (2,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        board, userid, password, *words = args
        record, user, seat = load_player(ctx, game, board, userid, password, running=True)
        text = " ".join(words)
        refuse_idle(game, record, user, seat)
        _state, move = checked_move(ctx, game, record, user, seat, text)
        keep(record, seat, "submit", move, ctx)
        state = previewed(ctx, game, record, user, seat, [fill_seats(move, names(record))])
        note = (f"Submitted, not yet played: {fill_seats(move, names(record))}. To play it, send: "
                f"{game.name} confirm {record.board} {user.userid} PASSWORD")
        shown = show_board(ctx.config, record, state, seat, ctx.now, note=note, hypothetical=True)
        ctx.reply(f"Submitted: {subject(record, current_state(record))}", shown.text, also_to=user.emails,
                  boards=[shown])
        return f"Move {fill_seats(move, names(record))} submitted on {game.title} board {record.board}."


@command
class Confirm(GameCommand):
    name = "confirm"
    arguments = "BOARD USERID PASSWORD"
    summary = "play the move you submitted"
    min_args = max_args = 3
    password_args = (2,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        board, userid, password = args
        record, user, seat = load_player(ctx, game, board, userid, password, running=True)
        pending = pending_of(record, seat, "submit")
        if pending is None:
            raise CommandError(f"{user.userid} has submitted no move on board {record.board}.",
                               f"Submit one first: {game.name} submit {record.board} {user.userid} PASSWORD MOVE")
        record.pending.remove(pending)
        drop_queued(record, seat)
        ctx.comment = ctx.comment or pending.comment
        return play_move(ctx, game, record, user, seat, fill_seats(pending.move, names(record)))

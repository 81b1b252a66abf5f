"""Votes, sent as moves (`GAME move BOARD USERID PASSWORD WORD`), in the games that
allow them.

- `propose`: propose a draw. Only in games that can end in a tie (`Game.can_tie`).
- `undo`: propose to take back the proposer's own last move and every action after
  it; the vote names that move's number (`move`). Only in games without chance or
  hidden information, and only once the proposer has made a move that still stands.
- `accept` / `reject`: answer the pending vote. Only the other players answer, each
  once; the proposer cannot (they may cancel it with a move, below).

Any player of a running board may propose, whether or not it is their turn; one vote
at a time (`GameRecord.vote`, shown on every board mail by `play.vote_line`). When
every other player has accepted, the outcome is logged with the proposer's seat: a
`draw` row (the game ends as a tie, and is rated as one) or an `undo` row naming the
first move taken back (replay rebuilds the position). One reject cancels the vote.
A move by any player, the proposer too, cancels a pending vote: the others agreed to
the position they saw, so a vote never outlives it. Each step mails the board to
every player and observer with a note saying what happened.

Votes are not moves: only their logged outcomes (`draw`, `undo` rows) are numbered,
so the #N guard on a vote means "only if the board still has N-1 moves". In a game
with no votes at all, `accept` and `reject` are left to the engine (Survive answers
its own offers with `accept N`). Errors say what was wrong and change nothing.

An accepted undo plays at once the queued move (`queue`) of a player it gives the
turn, as a move does; a move by hand drops its player's queued move.

A vote left pending when the game ends otherwise (a resignation, a forfeit) is
dropped by `play.record_action`; board mails show votes only on a running board.
"""

from __future__ import annotations

from ..games import Game
from ..play import DRAW, UNDO, current_state, names, proposed, record_action, standing_newest_first, waiting_for
from ..store.models import GameRecord, User
from ..store.movelog import log_of
from .base import CommandError, Context
from .boards import play_move, play_queued, send_boards
from .pending import drop_queued, refuse_idle

PROPOSE, ACCEPT, REJECT = "propose", "accept", "reject"
VOTE_WORDS = frozenset({PROPOSE, UNDO, ACCEPT, REJECT})


def undo_allowed(game: Game) -> bool:
    return not (game.has_chance or game.hidden_information)


def votes_allowed(game: Game) -> bool:
    return game.can_tie or undo_allowed(game)


def proposal(record: GameRecord, vote: dict) -> str:
    """`alice's proposal of a draw`, `alice's proposal to take back the moves from move 3 on`."""
    return f"{names(record)[vote['by']]}'s proposal {'of ' if vote['kind'] == DRAW else ''}{proposed(vote)}"


def move_or_vote(ctx: Context, game: Game, record: GameRecord, user: User, seat: int, text: str) -> str:
    """`text` as a vote word (any case), or a move while a vote is pending (which
    cancels the vote); the summary line of what was done."""
    word = text.strip().lower()
    if word not in VOTE_WORDS:
        by_hand(game, record, user, seat)
        if not record.vote:
            return play_move(ctx, game, record, user, seat, text)
        return move_cancelling_vote(ctx, game, record, user, seat, text)
    if word in (ACCEPT, REJECT) and not votes_allowed(game):
        by_hand(game, record, user, seat)
        return play_move(ctx, game, record, user, seat, text)  # the engine's own word, if it has one
    if word == PROPOSE:
        return propose(ctx, game, record, user, seat, DRAW)
    if word == UNDO:
        return propose(ctx, game, record, user, seat, UNDO)
    return answer(ctx, game, record, user, seat, word)


def by_hand(game: Game, record: GameRecord, user: User, seat: int) -> None:
    """Before a move by hand: refuse it from a seat with nothing to do, in the game's
    words, and drop the seat's queued move."""
    refuse_idle(game, record, user, seat)
    drop_queued(record, seat)


def refuse(record: GameRecord, user: User, problem: str, instead: str) -> CommandError:
    return CommandError(problem, instead, board=record, viewer=user)


def propose(ctx: Context, game: Game, record: GameRecord, user: User, seat: int, kind: str) -> str:
    board = record.board
    if kind == DRAW and not game.can_tie:
        raise refuse(record, user, f"{game.title} cannot end in a tie, so no draw can be proposed on board {board}.",
                     f"Play on, or give up with: {game.name} resign {board} {user.userid} PASSWORD")
    if kind == UNDO and not undo_allowed(game):
        reason = " and ".join(why for why, holds in (("chance", game.has_chance),
                                                     ("hidden information", game.hidden_information)) if holds)
        raise refuse(record, user, f"{game.title} has {reason}, so moves cannot be taken back on board {board}.",
                     f"Send your next move instead: {game.name} move {board} {user.userid} PASSWORD MOVE")
    if record.vote:
        if record.vote["by"] == seat:
            instead = "Wait for the answer to it: one vote at a time."
        else:
            instead = f"Answer it first: {game.name} move {board} {user.userid} PASSWORD accept (or reject)"
        raise refuse(record, user, f"A vote is already pending on board {board}: {proposal(record, record.vote)}.",
                     instead)
    vote = {"kind": kind, "by": seat, "accepted": []}
    if kind == UNDO:
        own = next((move.number for move in standing_newest_first(log_of(record))
                    if move.seat == seat and move.kind == "move"), None)
        if own is None:
            raise refuse(record, user,
                         f"{user.userid} has made no move on board {board}, so there is none to take back.",
                         "undo takes back your own last move and every move after it: send it once you have moved.")
        vote["move"] = own
    record.vote = vote
    record.updated_at = ctx.now
    note = (f"{user.userid} proposes {proposed(vote)}. To answer, send: "
            f"{game.name} move {board} USERID PASSWORD accept (or reject)")
    send_boards(ctx, record, current_state(record), user, [(user.userid, ctx.comment)], note=note)
    short = "a draw" if kind == DRAW else f"an undo from move {vote['move']}"
    return f"{user.userid} proposed {short} on {game.title} board {board}."


def answer(ctx: Context, game: Game, record: GameRecord, user: User, seat: int, word: str) -> str:
    board, vote = record.board, record.vote
    if not vote:
        raise refuse(record, user, f"There is no vote on board {board} to {word}.",
                     "accept and reject answer a draw (propose) or an undo another player proposed; "
                     "a board mail shows the vote while it is pending.")
    if vote["by"] == seat:
        raise refuse(record, user, f"{user.userid} proposed this vote, so only {', '.join(waiting_for(record, vote))} "
                                   f"can accept or reject it.",
                     "Wait for the answer; a move by any player, yours too, cancels the vote.")
    if seat in vote["accepted"]:
        raise refuse(record, user, f"{user.userid} has already accepted {proposal(record, vote)}.",
                     f"Wait for {', '.join(waiting_for(record, vote))} to answer.")
    comments = [(user.userid, ctx.comment)]
    if word == REJECT:
        record.vote = None
        record.updated_at = ctx.now
        send_boards(ctx, record, current_state(record), user, comments,
                    note=f"{user.userid} rejected {proposal(record, vote)}.")
        return f"{user.userid} rejected the vote on {game.title} board {board}."
    vote = {**vote, "accepted": vote["accepted"] + [seat]}
    if waiting_for(record, vote):
        record.vote = vote
        record.updated_at = ctx.now
        send_boards(ctx, record, current_state(record), user, comments,
                    note=f"{user.userid} accepted {proposal(record, vote)}.")
        return f"{user.userid} accepted the vote on {game.title} board {board}."
    record.vote = None
    state = current_state(record)
    if vote["kind"] == DRAW:
        state = record_action(ctx.session, record, state, vote["by"], DRAW, DRAW, ctx.comment, ctx.now, ctx.inbound_id)
        send_boards(ctx, record, state, user, comments, note=f"{user.userid} accepted: the draw was agreed.")
        return f"Draw agreed on {game.title} board {board}."
    first = vote["move"]
    state = record_action(ctx.session, record, state, vote["by"], UNDO, str(first), ctx.comment, ctx.now,
                          ctx.inbound_id)
    send_boards(ctx, record, state, user, comments,
                note=f"{user.userid} accepted: the moves from move {first} on were taken back.")
    play_queued(ctx, game, record)  # the turn may now be a player's with a queued move
    return f"Moves from move {first} on taken back on {game.title} board {board}."


def move_cancelling_vote(ctx: Context, game: Game, record: GameRecord, user: User, seat: int, text: str) -> str:
    """Play `text` while a vote is pending: the vote is cancelled, and the board mails
    say so (an illegal move changes nothing: the command's savepoint is undone)."""
    note = f"{user.userid}'s move cancelled {proposal(record, record.vote)}."
    record.vote = None
    return play_move(ctx, game, record, user, seat, text, note=note).rstrip(".") + "; it cancelled the vote."

"""Reply to play: a mail to a board mail's own Reply-To address plays its move
(`replyto.py` makes and checks the addresses; the worker finds the move in the mail)."""

from __future__ import annotations

from ..play import current_state, engine_of
from ..replyto import token_seat
from .base import CommandError, Context, ask_admins
from .boards import check_active, legal_hint
from .votes import move_or_vote


def play_by_reply(ctx: Context, token: str, text: str) -> str:
    """Play `text` as the move of the player whose reply-to-play token this is."""
    found = token_seat(ctx.session, ctx.config, token)
    if found is None:
        raise CommandError("This reply address plays on no board: the player's password changed since the board "
                           "mail was sent, or the address is not one of ours.",
                           "Send the move with your password: GAME move BOARD USERID PASSWORD MOVE")
    record, seat = found
    user = record.seats[seat].user
    if ctx.mail.sender.lower() not in {a.address_key for a in user.addresses if a.confirmed}:
        # a forwarded board mail must not hand over the seat, nor show its view: no board
        raise CommandError("Replies to play count only from the player's registered addresses.",
                           "Send it from your registered address, or: GAME move BOARD USERID PASSWORD MOVE")
    ctx.board, ctx.game = record, engine_of(record)
    if user.disabled:
        raise CommandError(f"The account {user.userid} is closed.", ask_admins(ctx, "to open it again", closed=True))
    check_active(record, ctx.game, user)
    if not text:
        raise CommandError("Your reply holds no move.",
                           "Reply to the board mail with just your move.\n"
                           + legal_hint(ctx.game, record, current_state(record), seat),
                           board=record, viewer=user)
    return move_or_vote(ctx, ctx.game, record, user, seat, text)

"""Reply to play: every player's board mail has a Reply-To of its own,
`pbmserv+TOKEN@domain`, and a mail to it may hold just the move.

TOKEN is `<game id>-<seat>-<mac>`: the mac is an HMAC of the game, the seat, the user
and the user's password hash under the server's key (keys.py), so it cannot be guessed, it is the
player's alone, and it stops working when the password changes; the worker also
refuses it once the game is over. Lower case only (base32), since some mail systems
fold the case of addresses.
"""

from __future__ import annotations

import hmac

from sqlalchemy.orm import Session, object_session

from .config import Config
from .keys import mac as key_mac, tagged_address
from .store.models import GameRecord, User
from .store.repo import game_by_id


def mac(session: Session, record_id: int, seat: int, user: User) -> str:
    return key_mac(session, "play", record_id, seat, user.id, user.password_hash)


def reply_address(config: Config, record: GameRecord, seat: int) -> str | None:
    """The address `seat`'s player answers a board mail of `record` at; None once the
    board is over."""
    session = object_session(record)
    if record.status != "active" or session is None:
        return None
    return tagged_address(config.server.address, f"{record.id}-{seat}-{mac(session, record.id, seat, record.seats[seat].user)}")


def token_seat(session: Session, config: Config, token: str) -> tuple[GameRecord, int] | None:
    """The board and seat a reply token stands for, if it is genuine and its player's
    password is still the one it was made with."""
    parts = token.lower().split("-")
    if len(parts) != 3 or not parts[0].isdecimal() or not parts[1].isdecimal() or len(parts[0]) > 12:
        return None
    record = game_by_id(session, int(parts[0]))
    seat = int(parts[1])
    if record is None or seat >= len(record.seats):
        return None
    expected = mac(session, record.id, seat, record.seats[seat].user)
    return (record, seat) if hmac.compare_digest(expected, parts[2]) else None

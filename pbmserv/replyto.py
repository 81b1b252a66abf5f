"""Reply to play: every player's board mail has a Reply-To of its own,
`pbmserv+TOKEN@domain`, and a mail to it may hold just the move.

TOKEN is `<game id>-<seat>-<mac>`: the mac is an HMAC of the game, the seat, the user
and the user's password hash under a server secret, so it cannot be guessed, it is the
player's alone, and it stops working when the password changes; the worker also
refuses it once the game is over. Lower case only (base32), since some mail systems
fold the case of addresses.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from sqlalchemy.orm import Session, object_session

from .config import Config
from .store.models import GameRecord, User
from .store.repo import fixed_setting

SECRET = "reply_secret"
MAC_LENGTH = 20  # base32 characters: 100 bits


def server_secret(session: Session, seed: str) -> bytes:
    """The key of every reply token: random, or derived from the configured seed so
    that a replay writes the same addresses."""
    return bytes.fromhex(fixed_setting(session, SECRET, lambda: hashlib.sha256(f"reply:{seed}".encode()).hexdigest()
                                       if seed else secrets.token_hex(32)))


def mac(key: bytes, record_id: int, seat: int, user: User) -> str:
    digest = hmac.new(key, f"{record_id}:{seat}:{user.id}:{user.password_hash}".encode(), hashlib.sha256).digest()
    return base64.b32encode(digest).decode().lower()[:MAC_LENGTH]


def reply_address(config: Config, record: GameRecord, seat: int) -> str | None:
    """The address `seat`'s player answers a board mail of `record` at; None once the
    board is over."""
    session = object_session(record)
    if record.status != "active" or session is None:
        return None
    key = server_secret(session, config.server.seed)
    local, _, domain = config.server.address.rpartition("@")
    token = f"{record.id}-{seat}-{mac(key, record.id, seat, record.seats[seat].user)}"
    return f"{local}+{token}@{domain}"


def token_seat(session: Session, config: Config, token: str) -> tuple[GameRecord, int] | None:
    """The board and seat a reply token stands for, if it is genuine and its player's
    password is still the one it was made with."""
    parts = token.lower().split("-")
    if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit() or len(parts[0]) > 12:
        return None
    record = session.get(GameRecord, int(parts[0]))
    seat = int(parts[1])
    if record is None or seat >= len(record.seats):
        return None
    expected = mac(server_secret(session, config.server.seed), record.id, seat, record.seats[seat].user)
    return (record, seat) if hmac.compare_digest(expected, parts[2]) else None

"""The server's secret key, and every secret derived from it.

Tokens mailed to players (confirmation, reset, unlock), password salts, reply-to-play
addresses and the tagged envelope senders of bounces are all HMACs under one key. In
`serve`, `deliver` and `tick` the key is made at random the first time it is needed
and kept in the database (settings row `server_key`); nothing configured can predict
it. Only `replay` (and the test harness, which stands in for it) installs a key derived
from its seed before any mail is read, so that a replay writes the same replies twice.
`[server] seed` itself seeds game chance only.

A *tag* is what follows the `+` of a sub-address of the server: `KIND-PAYLOAD-MAC`,
lower case (some mail systems fold the case of addresses), the MAC binding the kind,
the payload and whatever else the caller names (an address's pending token, a user's
password hash), so that it stops working when that changes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from sqlalchemy.orm import Session

from .store.repo import fixed_setting

KEY = "server_key"
MAC_LENGTH = 20  # base32 characters: 100 bits


def server_key(session: Session) -> bytes:
    """The key of every secret: random, made on first use and kept in the database."""
    return bytes.fromhex(fixed_setting(session, KEY, lambda: secrets.token_hex(32)))


def install_replay_key(session: Session, seed: str) -> None:
    """Give a replay's database a key derived from its seed (unless it has a key
    already), so that tokens and salts, and so replies, repeat from run to run."""
    fixed_setting(session, KEY, lambda: hashlib.sha256(f"pbmserv key:{seed}".encode()).hexdigest())


def derive(session: Session, *purpose: object) -> str:
    """64 hex digits that nobody without the key can compute, the same for the same
    purpose (e.g. `("token", inbound_id, "reset", userid)`)."""
    text = "\x00".join(str(part) for part in purpose).encode()
    return hmac.new(server_key(session), text, hashlib.sha256).hexdigest()


def mac(session: Session, *parts: object) -> str:
    """A short MAC of `parts` for addresses: MAC_LENGTH base32 characters, lower case."""
    digest = bytes.fromhex(derive(session, "mac", *parts))
    # each 5 bytes make 8 characters: encoding only the blocks the kept characters come
    # from gives the same characters as the whole digest, at half the cost
    blocks = -(-MAC_LENGTH // 8)
    return base64.b32encode(digest[:5 * blocks]).decode().lower()[:MAC_LENGTH]


def make_tag(session: Session, kind: str, payload: str, bind: str = "") -> str:
    """`KIND-PAYLOAD-MAC`; `bind` is covered by the MAC without being written."""
    return f"{kind}-{payload}-{mac(session, kind, payload, bind)}"


def split_tag(tag: str) -> tuple[str, str, str] | None:
    """(kind, payload, mac) of a tag as written, lower-cased; None if it has not that shape."""
    kind, _, rest = tag.lower().partition("-")
    payload, _, given = rest.rpartition("-")
    if not kind or not payload or len(given) != MAC_LENGTH or len(tag) > 200:
        return None
    return kind, payload, given


def tag_valid(session: Session, kind: str, payload: str, given: str, bind: str = "") -> bool:
    return hmac.compare_digest(mac(session, kind, payload, bind), given)


def tagged_address(server_address: str, tag: str) -> str:
    """The server's sub-address `local+TAG@domain`."""
    local, _, domain = server_address.rpartition("@")
    return f"{local}+{tag}@{domain}"


def address_tag(server_address: str, address: str) -> str | None:
    """The TAG of `local+TAG@domain` if `address` is such a sub-address of the server."""
    local, _, domain = server_address.lower().rpartition("@")
    name, _, host = address.strip().strip("<>").lower().rpartition("@")
    base, plus, tag = name.partition("+")
    return tag if plus and tag and base == local and host == domain else None

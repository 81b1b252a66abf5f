"""Password hashing with argon2id (salted, slow, constant-time verification).

argon2 is slow on purpose (about 0.1 s a verification at the standard cost), so that
a stolen database resists guessing. A player who sends ten moves with the same
password need not pay that ten times: credentials verified once are remembered, in
this process's memory only, as an HMAC under a key made at start-up, beside the
stored hash they matched. A changed password has a new hash, so its old entry can
never match again; a wrong password is never remembered, so guessing pays in full.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections import OrderedDict

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from argon2.profiles import CHEAPEST, RFC_9106_LOW_MEMORY

_HASHERS = {
    "standard": PasswordHasher.from_parameters(RFC_9106_LOW_MEMORY),
    "fast": PasswordHasher.from_parameters(CHEAPEST),  # tests only
}
REMEMBERED = 10_000  # verified credentials kept, the least recently used dropped first
_key = secrets.token_bytes(32)
_verified: OrderedDict[tuple[str, bytes], None] = OrderedDict()
_lock = threading.Lock()


def hash_password(password: str, cost: str = "standard", salt: bytes | None = None) -> str:
    """A new hash; `salt` is random unless given (replays give one derived from their
    seed, so that what depends on the hash, such as reply-to-play tokens, repeats)."""
    return _HASHERS[cost].hash(password, salt=salt)


def verify_password(stored_hash: str, password: str) -> bool:
    """True if `password` matches; any hash cost verifies (its parameters are inside it)."""
    entry = (stored_hash, hmac.new(_key, password.encode("utf-8", "surrogatepass"), hashlib.sha256).digest())
    with _lock:
        if entry in _verified:
            _verified.move_to_end(entry)
            return True
    try:
        _HASHERS["standard"].verify(stored_hash, password)
    except (VerificationError, InvalidHashError):
        return False
    with _lock:
        _verified[entry] = None
        while len(_verified) > REMEMBERED:
            _verified.popitem(last=False)
    return True

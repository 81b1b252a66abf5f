"""Password hashing with argon2id (salted, slow, constant-time verification)."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from argon2.profiles import CHEAPEST, RFC_9106_LOW_MEMORY

_HASHERS = {
    "standard": PasswordHasher.from_parameters(RFC_9106_LOW_MEMORY),
    "fast": PasswordHasher.from_parameters(CHEAPEST),  # tests only
}


def hash_password(password: str, cost: str = "standard", salt: bytes | None = None) -> str:
    """A new hash; `salt` is random unless given (replays give one derived from their
    seed, so that what depends on the hash, such as reply-to-play tokens, repeats)."""
    return _HASHERS[cost].hash(password, salt=salt)


def verify_password(stored_hash: str, password: str) -> bool:
    """True if `password` matches; any hash cost verifies (its parameters are inside it)."""
    try:
        return _HASHERS["standard"].verify(stored_hash, password)
    except (VerificationError, InvalidHashError):
        return False

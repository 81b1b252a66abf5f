"""Password hashing, and verified credentials remembered so argon2 is paid once."""

from __future__ import annotations

import pytest

from pbmserv import passwords
from pbmserv.passwords import hash_password, verify_password


class Counting:
    """Stands in for the argon2 hasher's `verify`, counting the calls it passes on."""

    def __init__(self, real):
        self.real, self.calls = real, 0

    def verify(self, stored, password):
        self.calls += 1
        return self.real.verify(stored, password)


@pytest.fixture
def counting(monkeypatch):
    monkeypatch.setattr(passwords, "_verified", type(passwords._verified)())
    hasher = Counting(passwords._HASHERS["standard"])
    monkeypatch.setitem(passwords._HASHERS, "standard", hasher)
    return hasher


def test_verified_credentials_are_not_hashed_again(counting):
    stored = hash_password("secret", "fast")
    assert [verify_password(stored, "secret") for _ in range(5)] == [True] * 5
    assert counting.calls == 1


def test_a_wrong_password_is_never_remembered(counting):
    stored = hash_password("secret", "fast")
    assert [verify_password(stored, "guess") for _ in range(3)] == [False] * 3
    assert counting.calls == 3  # every guess pays argon2 in full


def test_a_changed_password_leaves_the_old_one_behind(counting):
    old = hash_password("secret", "fast")
    assert verify_password(old, "secret")
    new = hash_password("other", "fast")
    assert not verify_password(new, "secret")
    assert verify_password(new, "other")
    assert counting.calls == 3


def test_only_so_many_credentials_are_remembered(counting, monkeypatch):
    monkeypatch.setattr(passwords, "REMEMBERED", 2)
    hashes = [hash_password(f"pw{i}", "fast") for i in range(3)]
    for i, stored in enumerate(hashes):
        assert verify_password(stored, f"pw{i}")
    assert len(passwords._verified) == 2
    assert verify_password(hashes[0], "pw0")  # dropped as the least recently used: verified anew
    assert counting.calls == 4


def test_a_malformed_stored_hash_never_verifies(counting):
    assert not verify_password("not a hash", "secret")

"""Issue 17, a newcomer's first hour: a vacation's days left, a queued move after an
accepted undo, and table talk by Survive players who are out."""

from __future__ import annotations

from datetime import timedelta

from conftest import body_of

ALICE = "alice@example.org"
BOB = "bob@example.org"
CAROL = "carol@example.org"
MASK = "********"
MINUTE = timedelta(minutes=1)


def error(problem: str, instead: str, quoted: str) -> str:
    return f"{problem}\n{instead}\n\nYour message:\n> Subject: {quoted}\n"


# --- vacation: the days a message says are left are the days granted ---------------


def test_a_minute_away_shows_the_days_that_can_still_be_taken(server):
    """'30 of 30 days left' and then '30 days' refused was a contradiction."""
    server.signup("alice", "bob")
    server.one(BOB, "vacation bob bob-pw 1")
    server.wait(MINUTE)
    assert body_of(server.one(BOB, "vacation bob bob-pw off")).split("\n")[1] == (
        "Vacation left: 29.9 of 30 days in 365 days.")
    assert body_of(server.one(BOB, "vacation bob bob-pw 30")) == error(
        "bob has 29.9 days of vacation left: 0.1 days of 30 days were taken in the last 365 days.",
        "Send: vacation bob PASSWORD DAYS with at most the days left, or 'on'.", f"vacation bob {MASK} 30")
    assert body_of(server.one(BOB, "vacation bob bob-pw 29")).split("\n")[1] == (
        "Vacation left: 0.9 of 30 days in 365 days.")

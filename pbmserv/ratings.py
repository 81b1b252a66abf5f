"""Elo ratings per two-player game type (issue: records).

Everyone starts at 1600; each rated game moves both players by K = 32 times the
difference between the score (1, 0.5, 0) and the expected score. A rating is
provisional for its first 20 games. Games of more than two players, and games that end
with no result (an abort, a decline), are not rated.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from .games import Game, Outcome, get_game
from .store.models import GameRecord, Rating, User

START, K, PROVISIONAL_GAMES = 1600.0, 32, 20


def rated(game: Game) -> bool:
    """Only the game types for exactly two players are rated."""
    return game.max_players == 2


def rating_of(session: Session, user: User, game_type: str) -> Rating:
    """The user's rating row for the game type, made at the start value if new."""
    row = session.scalar(select(Rating).where(Rating.user_id == user.id, Rating.game_type == game_type))
    if row is None:
        row = Rating(user=user, game_type=game_type, rating=START, games=0)
        session.add(row)
    return row


def expected(rating: float, other: float) -> float:
    return 1 / (1 + 10 ** ((other - rating) / 400))


def rate(session: Session, record: GameRecord, outcome: Outcome) -> None:
    """Update both players' ratings for a two-player game that ended with `outcome`."""
    if not rated(get_game(record.game_type)) or not (outcome.tie or outcome.winners):
        return  # a 2-player Survive board is not rated either
    first, second = (rating_of(session, seat.user, record.game_type) for seat in record.seats)
    score = 0.5 if outcome.tie else (1.0 if 0 in outcome.winners else 0.0)
    change = K * (score - expected(first.rating, second.rating))
    first.rating, second.rating = first.rating + change, second.rating - change
    first.games += 1
    second.games += 1

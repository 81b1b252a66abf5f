"""Records of finished games: `GAME history [USERID]` and `GAME standings`.

history
    The finished boards of the game (those of USERID, if given): the newest first, by
    the time each ended (`GameRecord.updated_at`, which no later command changes), then
    by board number. One line a board: its number, the date it ended (UTC), its players
    in seat order and its result line (`GameRecord.result`, e.g. "Game won by bob." or
    "Game aborted by carol: no result."; aborted and declined boards are listed too,
    though unrated). At most the last 50 boards are listed; the heading says so when
    there are more. A board's whole record stays at hand with `GAME show BOARD`: once
    a board is over, its board mail lists every move.

standings
    The Elo ratings of a two-player game (`ratings.py`: 1600 to start, K = 32), highest
    first, ties by userid. Ratings are rounded half up to a whole number, and players
    with equal rounded ratings share a rank. A rating is provisional, marked "?" after
    it (with a legend line below the table), until its player has finished 20 rated
    games. Every player with at least one rated game is listed (closed accounts too).
    A game for more than two players is not rated: `survive standings` is an error.

The complete game record needs no command: when a board ends, each player's final
board mail (`play.board_mails`) holds every move, the final board and the result.
"""

from __future__ import annotations

import math

from sqlalchemy import func, select

from ..games import Game, games
from ..play import names
from ..ratings import PROVISIONAL_GAMES, rated
from ..render import render
from ..store.models import GameRecord, Rating, Seat, User
from ..store.repo import find_user
from .account import plural
from .base import CommandError, Context, GameCommand, command

HISTORY_LIMIT = 50  # the most boards a history lists


def whole(rating: float) -> int:
    """A rating rounded half up (Python's round() would round 1600.5 down)."""
    return math.floor(rating + 0.5)


def shown_rating(row: Rating) -> str:
    """A rating as lists show it: `1616`, or `1580?` while provisional."""
    return f"{whole(row.rating)}{'?' if row.games < PROVISIONAL_GAMES else ''}"


@command
class History(GameCommand):
    name = "history"
    arguments = "[USERID]"
    summary = "the finished boards of this game (or of a player), with their results"
    description = (f"The newest first, at most {HISTORY_LIMIT}: each board's number, the date it ended\n"
                   "(UTC), its players and its result. 'GAME show BOARD' sends a whole game:\n"
                   "every move and the final board.")
    max_args = 1

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        user: User | None = None
        if args:
            user = find_user(ctx.session, args[0])
            if user is None:
                raise CommandError(f"There is no user {args[0]}.",
                                   f"Check the spelling of the userid, or send: {game.name} history")
        query = select(GameRecord).where(GameRecord.game_type == game.name, GameRecord.status == "finished")
        if user is not None:
            query = query.where(GameRecord.id.in_(select(Seat.game_id).where(Seat.user_id == user.id)))
        total = ctx.session.scalar(select(func.count()).select_from(query.subquery()))
        records = ctx.session.scalars(
            query.order_by(GameRecord.updated_at.desc(), GameRecord.board.desc()).limit(HISTORY_LIMIT)).all()
        rows = [(r.board, f"{r.updated_at:%Y-%m-%d}", ", ".join(names(r)), r.result) for r in records]
        ctx.reply(f"{game.title} history", render("commands/history.txt", game=game, user=user, rows=rows,
                                                  total=total, limit=HISTORY_LIMIT))
        return f"History of {game.title} sent."


@command
class Standings(GameCommand):
    name = "standings"
    summary = "the players' Elo ratings in this game (two-player games only)"
    description = ("Everyone starts at 1600; each game that ends with a result moves both\n"
                   "players' ratings (K = 32). Aborted boards are not rated. A rating marked ?\n"
                   f"is provisional: its player has finished fewer than {PROVISIONAL_GAMES} rated games.")

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        if not rated(game):
            two = ", ".join(g.name for g in games().values() if rated(g))
            raise CommandError(f"{game.title} may be played by more than two, so it is not rated.",
                               f"Standings are kept for the two-player games: {two}.")
        ratings = ctx.session.scalars(
            select(Rating).join(User).where(Rating.game_type == game.name, Rating.games > 0)).all()
        rows: list[tuple[int, str, int, str, str]] = []
        for position, row in enumerate(sorted(ratings, key=lambda r: (-whole(r.rating), r.user.userid_key)), 1):
            rating = whole(row.rating)
            rank = rows[-1][0] if rows and rows[-1][2] == rating else position  # equal ratings share a rank
            mark = "?" if row.games < PROVISIONAL_GAMES else " "
            rows.append((rank, row.user.userid, rating, mark, plural(row.games, "game")))
        ctx.reply(f"{game.title} standings", render(
            "commands/standings.txt", game=game, rows=rows, width=max([len(r[1]) for r in rows], default=0),
            provisional=PROVISIONAL_GAMES, any_provisional=any(r[3] == "?" for r in rows)))
        return f"Standings of {game.title} sent."

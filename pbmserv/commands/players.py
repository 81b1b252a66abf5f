"""`players [GAME]`: the users who chose to be listed (`set USERID PASSWORD listed
on`), for a newcomer to find someone to play with: userid, games running and
finished, the last move and the ratings. Never an address; closed accounts are not
listed. At most PLAYERS_LIMIT are listed, those who moved last first. The robot
players come first, weak to strong: always there, rated like everyone, so that a
newcomer can measure themselves."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import false, func, select, true

from ..games import games, get_game
from ..ratings import PROVISIONAL_GAMES
from ..robots import STRENGTH
from ..render import render
from ..store.models import GameRecord, Move, Rating, Seat, User
from .base import Command, CommandError, Context, command
from .records import shown_rating

PLAYERS_LIMIT = 100  # the most players one list names


@command
class Players(Command):
    name = "players"
    arguments = "[GAME]"
    summary = "the players who want games, with their ratings"
    description = ("Players are listed once they send: set USERID PASSWORD listed on\n"
                   "With GAME, only that game's boards and rating count.")
    max_args = 1

    def run(self, ctx: Context, args: list[str]) -> str:
        game = None
        if args:
            game = get_game(args[0])
            if game is None:
                raise CommandError(f"There is no game '{args[0][:30]}'.",
                                   f"The games are {', '.join(games())}; send e.g.: players {next(iter(games()))}")
        users = ctx.session.scalars(select(User).where(User.listed == true(), User.disabled == false())).all()
        rows = player_rows(ctx, users, game.name if game else None)
        robots = sorted((row for row in rows if row[0].robot), key=lambda row: row[0].robot)
        people = [row for row in rows if not row[0].robot]
        shown = people[:PLAYERS_LIMIT]
        ctx.reply("pbmserv players", render(
            "commands/players.txt", game=game, rows=shown, more=len(people) - PLAYERS_LIMIT, robots=robots,
            strength=STRENGTH,
            provisional=PROVISIONAL_GAMES if any("?" in rating for row in shown + robots for rating in row[4]) else 0))
        return f"List of {len(people)} players and {len(robots)} robots sent."


def player_rows(ctx: Context, users: list[User], game_type: str | None) -> list[tuple]:
    """(user, running, finished, last move, ratings) of `users`, who moved last first."""
    ids = [user.id for user in users]
    of_game = [GameRecord.game_type == game_type] if game_type else []
    counts: dict[tuple[int, str], int] = {
        (user_id, status): count for user_id, status, count in ctx.session.execute(
            select(Seat.user_id, GameRecord.status, func.count()).join(GameRecord, Seat.game_id == GameRecord.id)
            .where(Seat.user_id.in_(ids), *of_game).group_by(Seat.user_id, GameRecord.status))}
    last: dict[int, datetime] = dict(ctx.session.execute(
        select(Seat.user_id, func.max(Move.created_at))
        .join(Move, (Move.game_id == Seat.game_id) & (Move.seat == Seat.seat))
        .join(GameRecord, Seat.game_id == GameRecord.id)
        .where(Seat.user_id.in_(ids), *of_game).group_by(Seat.user_id)).all())
    ratings: dict[int, list[str]] = {}
    for rating in ctx.session.scalars(select(Rating).where(
            Rating.user_id.in_(ids), Rating.games > 0, *([Rating.game_type == game_type] if game_type else []))
            .order_by(Rating.game_type)):
        ratings.setdefault(rating.user_id, []).append(f"{rating.game_type} {shown_rating(rating)}")
    rows = [(user, counts.get((user.id, "active"), 0), counts.get((user.id, "finished"), 0),
             last.get(user.id), ratings.get(user.id, [])) for user in users]
    rows.sort(key=lambda row: row[0].userid_key)
    return sorted(rows, key=lambda row: row[3] or datetime.min, reverse=True)  # stable: ties by userid

"""Open challenges (issue 19): `GAME seek`, `seeks`, `join`, `start`, `unseek`.

seek USERID PASSWORD [PLAYERS] [-NAME=VALUE ...]
    Posts a seek (`store.models.Seek`, its id the SEEK number players send) for
    PLAYERS seats in all, the seeker's included (default: the game's fewest). The
    parameters, -nagtime and -forfeittime are read as `challenge` reads them
    (`game.game_settings`); a -first=USERID can name only the seeker, the one player
    known yet. At most SEEKS_PER_GAME open seeks per user and game, SEEKS_IN_ALL in
    all. A seek expires after `[games] seek_days` days: the scheduler
    (`scheduler.run_due`, `expire`) mails the seeker and those who joined how to post
    it again.

seeks
    The open seeks of the game, the oldest first, at most SEEKS_LISTED: number,
    seeker with their rating in the game ("unrated" if none), the players it has and
    wants, the parameters and when it expires.

join SEEK USERID PASSWORD
    Takes a seat. A seek that is full with it (every two-player seek) starts its
    board at once: the seeker in seat 0 and the joiners in join order, started by the
    seeker, so the joiners are the challenged players (they may decline, as after a
    challenge). Otherwise the seeker is mailed who joined.

start SEEK USERID PASSWORD [ROBOT ...]
    The seeker starts the seek with the players who joined, and the robot players
    (`User.robot`) named to fill empty seats, if they make at least the game's fewest.

unseek SEEK USERID PASSWORD
    From the seeker: the seek is withdrawn and its joiners are mailed. From a joiner:
    they leave it and the seeker is mailed.

Refuse and limit (`challenges.py`) apply to the joiners, never to the seeker: a
joiner who refuses the game, or who plays as many boards others started as their
limit (the open seeks of the game they joined counted too), cannot join; and when a
seek would start, every joiner is checked again, and a joiner who refuses the game
or is at their limit by then keeps it from starting (the error names them and says
how it resolves). A closed account cannot seek or join; the seeks of a closed
account are off, and a joiner whose account was closed no longer counts. Joins are
limited to JOINS_PER_DAY a user (each join and leave mails the seeker).
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import NamedTuple

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..clocks import clock_params
from ..config import Config
from ..games import Game, get_game
from ..games.base import PlayerParam, echoed
from ..mail.outbound import Mail, queue_mails
from ..play import start_game, when
from ..ratings import PROVISIONAL_GAMES
from ..render import render
from ..robots import STRENGTH
from ..store.models import Rating, Seek, User
from ..store.repo import find_user, rate_limited
from .base import CommandError, Context, GameCommand, authenticate, command, fit
from .boards import send_boards
from .challenges import boards, challenged_notes, check_welcome, preference, started_by_others
from .game import check_dashes, game_settings
from .records import shown_rating

SEEKS_PER_GAME = 3  # open seeks one user may have of one game
SEEKS_IN_ALL = 20  # open seeks one user may have in all games
SEEKS_LISTED = 100  # seeks in a `seeks` reply
JOINS_PER_DAY = 30  # joins of one user in 24 hours: each join, and each leave, mails a seeker
NUMBER_DIGITS = 9  # a longer SEEK number is no seek's
USERID = re.compile(r"[A-Za-z0-9_.-]{1,20}")


# --- reading a seek ----------------------------------------------------------------------


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def listed(names: list[str]) -> str:
    """`bob`, `bob and carol`, `bob, carol and dave`."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def seek_number(text: str, game: Game) -> int:
    if not (text.isascii() and text.isdecimal()) or len(text) > NUMBER_DIGITS:
        raise CommandError(f"'{echoed(text)}' is not a seek number.",
                           f"Seek numbers are whole numbers such as 1; send '{game.name} seeks' for the open ones.")
    return int(text)


def load_seek(ctx: Context, game: Game, text: str, cmd: GameCommand) -> Seek:
    """The open seek numbered `text`, locked for this command, or the error saying
    why it cannot be used."""
    number = seek_number(text, game)
    seek = ctx.session.scalar(select(Seek).where(Seek.id == number).with_for_update())
    others = f"Send '{game.name} seeks' for the open seeks."
    if seek is None:
        raise CommandError(f"There is no seek {number}.", others)
    if seek.game_type != game.name:
        other = get_game(seek.game_type)
        title = other.title if other is not None else seek.game_type
        raise CommandError(f"Seek {number} is for {title}, not {game.title}.",
                           f"Send: {cmd.usage(other).replace('SEEK', str(number))}" if other is not None else others)
    if seek.status == "started":
        raise CommandError(f"Seek {number} has started already: it is {game.title} board {seek.board}.",
                           f"{others}\nTo look at the board, send: {game.name} show {seek.board}")
    if seek.status == "withdrawn":
        raise CommandError(f"Seek {number} was withdrawn by {seek.user.userid}.", others)
    if seek.status == "expired" or seek.expires_at <= ctx.now:
        raise CommandError(f"Seek {number} expired at {when(seek.expires_at)}.", others)
    if seek.user.disabled:
        raise CommandError(f"Seek {number} is off: the account {seek.user.userid} is closed.", others)
    return seek


def joiners(session: Session, seek: Seek) -> list[User]:
    """Those who joined `seek`, in join order, but closed accounts."""
    if not seek.joined:
        return []
    users = {user.id: user for user in session.scalars(select(User).where(User.id.in_(seek.joined)))}
    return [users[i] for i in seek.joined if i in users and not users[i].disabled]


def robots(session: Session) -> list[User]:
    """The robot players that may fill a seat, weakest first."""
    return list(session.scalars(select(User).where(User.robot.is_not(None), User.disabled.is_(False))
                                .order_by(User.robot, User.userid_key)))


def shown_params(config: Config, game: Game, seek: Seek, changed: bool = False) -> list[str]:
    """The seek's parameters as `-name=value` words (`changed`: only those that are
    not the defaults, as one would send them)."""
    words = []
    for param in game.params:
        value = seek.params.get(param.name, param.default)
        if changed and value == param.default:
            continue
        if isinstance(param, PlayerParam):
            if value == 0:  # the one seat a seek knows: the seeker's
                words.append(f"-{param.name}={seek.user.userid}")
            continue
        words.append(f"-{param.name}={param.show(value)}")
    clocks = {param.name: param for param in clock_params(config, game)}
    for name, value in (("nagtime", seek.nag_after), ("forfeittime", seek.forfeit_after)):
        if name in clocks and not (changed and value == clocks[name].default):
            words.append(f"-{name}={clocks[name].show(value)}")
    return words


def seek_line(config: Config, game: Game, seek: Seek, userid: str) -> str:
    """The `seek` command that posts a seek like `seek` for `userid`."""
    words = [game.name, "seek", userid, "PASSWORD"]
    if seek.players != game.min_players:
        words.append(str(seek.players))
    return " ".join(words + shown_params(config, game, seek, changed=True))


def ratings_of(session: Session, users: list[User], game: Game) -> dict[int, str]:
    """Each user's rating in `game` as listed: `1616`, `1580?` (provisional) or
    `unrated`."""
    found = {row.user_id: row for row in session.scalars(select(Rating).where(
        Rating.user_id.in_([user.id for user in users]), Rating.game_type == game.name, Rating.games > 0))}
    return {user.id: shown_rating(row) if (row := found.get(user.id)) is not None else "unrated" for user in users}


def open_seeks(ctx: Context, *where) -> list[Seek]:
    return list(ctx.session.scalars(select(Seek).where(Seek.status == "open", Seek.expires_at > ctx.now, *where)))


class Block(NamedTuple):
    """Why a user may not be a joiner now: `refuse`s the game, or is at their limit;
    `why` says it (after the userid), `remedy` is what they can send about it."""

    refuse: bool
    why: str
    remedy: str


def blocked(ctx: Context, game: Game, user: User, pending: int = 0) -> Block | None:
    """Why `user` may not be a joiner of a board of `game` now (as `check_welcome`
    judges a challenged player), or None. `pending`: the open seeks of the game they
    joined, counted to their limit as the boards they will be."""
    pref = preference(ctx, user, game)
    if pref is None:
        return None
    if pref.refuse:
        return Block(True, f"refuses challenges of {game.title}", f"{game.name} welcome {user.userid} PASSWORD")
    if pref.limit is not None:
        running = started_by_others(ctx, user, game)
        if running + pending >= pref.limit:
            seeks = f" and has joined {plural(pending, 'open seek')}" if pending else ""
            return Block(False, f"plays {boards(running, game)} that others started{seeks} (limit: {pref.limit})",
                         f"{game.name} limit {user.userid} PASSWORD N")
    return None


def check_joiners(ctx: Context, game: Game, seek: Seek, players: list[User], sender: User) -> None:
    """Every joiner is checked again when the board would start."""
    for joiner in players:
        block = blocked(ctx, game, joiner)
        if block is None:
            continue
        fix = (f"{joiner.userid} sends '{block.remedy}'" if block.refuse
               else f"one of {joiner.userid}'s boards ends, or {joiner.userid} sends '{block.remedy}'")
        raise CommandError(
            fit(f"Seek {seek.id} cannot start: {joiner.userid}, who joined it, {block.why}."),
            fit(f"It can start once {fix}, or once {joiner.userid} leaves it "
                f"('{game.name} unseek {seek.id} {joiner.userid} PASSWORD').\n"
                f"To ask {joiner.userid}, send: message {sender.userid} PASSWORD {joiner.userid}"))


def begin(ctx: Context, game: Game, seek: Seek, sender: User, seated: list[User], why: str,
          seeker_note: str = "") -> str:
    """Start the board of `seek` with the seeker and `seated` (joiners in join
    order, then robots), and mail every player the new board."""
    seeker = seek.user
    players = [seeker] + seated
    record, state = start_game(ctx.session, ctx.config, game, players, dict(seek.params), ctx.now,
                               seek.nag_after, seek.forfeit_after, starter=seeker)
    seek.status, seek.board = "started", record.board
    seek.joined = [user.id for user in seated if user.robot is None]
    notes = challenged_notes(game, record, state, why)
    if seeker_note:
        notes[0] = seeker_note
    send_boards(ctx, record, state, sender, [(sender.userid, ctx.comment)], new=True, notes=notes)
    return f"Seek {seek.id}: new {game.title} board {record.board} started."


def robot_names(session: Session) -> str:
    """`robot1 (weak), robot2 (medium), robot3 (strong)`, or '' on a server with none."""
    return ", ".join(f"{robot.userid} ({STRENGTH.get(robot.robot, f'level {robot.robot}')})"
                     for robot in robots(session))


def how_to_start(ctx: Context, game: Game, seek: Seek, count: int) -> str:
    """The seeker's way to start `seek` (with `count` players now) before it is full."""
    names = robot_names(ctx.session)
    line = f"{game.name} start {seek.id} {seek.user.userid} PASSWORD"
    fill_in = f"where each ROBOT names a robot player for an empty seat: {names}."
    if count >= game.min_players:
        if names:
            return f"To start it now with these players, send:\n  {line} [ROBOT ...]\n{fill_in}"
        return f"To start it now with these players, send:\n  {line}"
    if names:
        return f"To start it now against robots, send:\n  {line} ROBOT ...\n{fill_in}"
    return ""


# --- the commands ---------------------------------------------------------------------------


@command
class SeekCommand(GameCommand):
    name = "seek"
    arguments = "USERID PASSWORD [PLAYERS] [-NAME=VALUE ...]"
    summary = "post an open challenge that anyone may join"
    description = ("PLAYERS is the number of players in all, yours included (default: the fewest\n"
                   "the game is played by). Parameters as for 'GAME challenge'; 'GAME help' lists\n"
                   "them. A two-player game starts as soon as someone joins; a game for more when\n"
                   "the seek is full, or when you start it. A seek not started expires after a\n"
                   "number of days (7 unless the server says otherwise): you are mailed.\n"
                   f"You may have {SEEKS_PER_GAME} open seeks of a game, {SEEKS_IN_ALL} in all.")
    min_args, max_args = 2, None
    password_args = (1,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        userid, password, *rest = args
        user = authenticate(ctx, userid, password)
        check_dashes(ctx, game, user, rest, self.name)
        seats = self.seats(game, user, [word for word in rest if not word.startswith("-")])
        words = [word for word in rest if word.startswith("-")]
        params, nag, forfeit = game_settings(ctx, game, words, [user.userid], self.usage(game),
                                             f"{game.name} seek USERID PASSWORD")
        self.check_caps(ctx, game, user)
        seek = Seek(game_type=game.name, user_id=user.id, user=user, players=seats, params=params, nag_after=nag,
                    forfeit_after=forfeit, joined=[], status="open", created_at=ctx.now,
                    expires_at=ctx.now + timedelta(days=ctx.config.games.seek_days))
        ctx.session.add(seek)
        ctx.session.flush()
        ctx.reply(f"{game.title} seek", render(
            "commands/seek.txt", game=game, seek=seek, user=user, params=" ".join(shown_params(ctx.config, game, seek)),
            expires=when(seek.expires_at), start=how_to_start(ctx, game, seek, 1)), also_to=user.emails)
        return f"{game.title} seek {seek.id} posted."

    def seats(self, game: Game, user: User, words: list[str]) -> int:
        """The number of players the seek is for."""
        if not words:
            return game.min_players
        count = (str(game.min_players) if game.min_players == game.max_players
                 else f"{game.min_players} to {game.max_players}")
        word = next((w for w in words if not (w.isascii() and w.isdecimal())), None)
        if word is not None:
            instead = f"PLAYERS is the number of players in all, yours included: {count}."
            if USERID.fullmatch(word):
                instead += (f"\nA seek is open to anyone; to challenge {word} instead, send:\n"
                            f"  {game.name} challenge {user.userid} PASSWORD {word}")
            else:
                instead += f"\nSend: {self.usage(game)}"
            raise CommandError(f"'{echoed(word)}' is not a number of players.", fit(instead))
        if len(words) > 1:
            raise CommandError(f"'{echoed(' '.join(words), 40)}': give the number of players once.",
                               f"Send: {self.usage(game)}")
        number = int(words[0]) if len(words[0]) <= NUMBER_DIGITS else None
        if number is None or not game.min_players <= number <= game.max_players:
            leave = (f" (or leave the number out: it is {game.min_players})"
                     if game.min_players == game.max_players else "")
            shown = words[0] if len(words[0]) <= NUMBER_DIGITS else f"'{echoed(words[0])}'"
            raise CommandError(f"{game.title} is played by {count} players, not {shown}.",
                               fit(f"Send: {game.name} seek {user.userid} PASSWORD {game.min_players}{leave}"))
        return number

    def check_caps(self, ctx: Context, game: Game, user: User) -> None:
        mine = open_seeks(ctx, Seek.user_id == user.id)
        listing = f"'{game.name} seeks' lists them"
        if sum(seek.game_type == game.name for seek in mine) >= SEEKS_PER_GAME:
            raise CommandError(
                fit(f"{user.userid} has {SEEKS_PER_GAME} open seeks of {game.title} already, the most one may have."),
                fit(f"Withdraw one first ({listing}): {game.name} unseek SEEK {user.userid} PASSWORD"))
        if len(mine) >= SEEKS_IN_ALL:
            raise CommandError(
                fit(f"{user.userid} has {SEEKS_IN_ALL} open seeks already, the most one may have in all games."),
                fit(f"Withdraw one first ('GAME seeks' lists them): GAME unseek SEEK {user.userid} PASSWORD"))


@command
class Seeks(GameCommand):
    name = "seeks"
    summary = "the open challenges of this game, the oldest first"
    description = ("Each with its number, the seeker and their rating, the players it has and\n"
                   f"wants, its parameters and when it expires. At most {SEEKS_LISTED} are listed.")

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        where = (Seek.status == "open", Seek.expires_at > ctx.now, Seek.game_type == game.name,
                 Seek.user_id.in_(select(User.id).where(User.disabled.is_(False))))
        total = ctx.session.scalar(select(func.count(Seek.id)).where(*where)) or 0
        seeks = list(ctx.session.scalars(select(Seek).where(*where).order_by(Seek.created_at, Seek.id)
                                         .limit(SEEKS_LISTED)))
        ratings = ratings_of(ctx.session, [seek.user for seek in seeks], game)
        rows = []
        for seek in seeks:
            names = [seek.user.userid] + [user.userid for user in joiners(ctx.session, seek)]
            who = f" ({', '.join(names)})" if seek.players > 2 else ""
            head = (f"Seek {seek.id}: {seek.user.userid} ({ratings[seek.user.id]}), {len(names)} of "
                    f"{seek.players} players{who}, open until {when(seek.expires_at)}")
            rows.append((head, " ".join(shown_params(ctx.config, game, seek)) or "no parameters"))
        provisional = any(ratings[seek.user.id].endswith("?") for seek in seeks)
        ctx.reply(f"{game.title} seeks", render(
            "commands/seeks.txt", game=game, rows=rows, total=total, post=SeekCommand().usage(game),
            provisional=PROVISIONAL_GAMES if provisional else 0))
        return f"List of {game.title} seeks sent."


@command
class Join(GameCommand):
    name = "join"
    arguments = "SEEK USERID PASSWORD"
    summary = "take a seat in an open challenge; a two-player game starts at once"
    description = ("A game for more players starts when the seek is full, or when its seeker\n"
                   "starts it; you get the new board mail. Your 'GAME refuse' and 'GAME limit'\n"
                   "apply as to a challenge. To leave a seek, send 'GAME unseek SEEK USERID PASSWORD'.")
    min_args = max_args = 3
    password_args = (2,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        number, userid, password = args
        seek = load_seek(ctx, game, number, self)
        user = authenticate(ctx, userid, password)
        seeker = seek.user
        present = joiners(ctx.session, seek)
        if user.id == seeker.id:
            start = how_to_start(ctx, game, seek, 1 + len(present))
            raise CommandError(f"{user.userid} posted seek {seek.id}, so cannot join it.",
                               f"Others join it.\n{start}" if start else "Others join it.")
        if user in present:
            raise CommandError(
                f"{user.userid} has joined seek {seek.id} already: {1 + len(present)} of {seek.players} players.",
                fit(f"It starts when it is full, or when {seeker.userid} starts it.\n"
                    f"To leave it, send: {game.name} unseek {seek.id} {user.userid} PASSWORD"))
        self.check_joiner(ctx, game, user, seek)
        if rate_limited(ctx.session, "seek-join", f"user:{user.userid_key}", ctx.now, JOINS_PER_DAY):
            raise CommandError(f"{user.userid} joined {JOINS_PER_DAY} seeks in the last 24 hours, the most a day.",
                               "Wait a day, then send it again.")
        present.append(user)
        seek.joined = [joiner.id for joiner in present]
        count = 1 + len(present)
        if count >= seek.players:
            check_joiners(ctx, game, seek, present, user)
            return begin(ctx, game, seek, user, present, f"{seeker.userid}'s seek {seek.id} is full.",
                         f"{user.userid} joined your seek {seek.id}, so the game starts.")
        names = listed([seeker.userid] + [joiner.userid for joiner in present])
        more = plural(seek.players - count, "more player") + (" joins" if seek.players - count == 1 else " join")
        ctx.reply(f"{game.title} join", fit(
            f"{user.userid} joined {game.title} seek {seek.id} of {seeker.userid}: {count} of {seek.players} "
            f"players now ({names}).\n"
            f"It starts when {more}, or when {seeker.userid} starts it: you get the new board mail.\n"
            f"To leave it, send: {game.name} unseek {seek.id} {user.userid} PASSWORD\n"), also_to=user.emails)
        start = how_to_start(ctx, game, seek, count)
        ctx.notify(seeker.emails, f"{game.title} seek {seek.id}: {user.userid} joined", fit(
            f"{user.userid} joined your {game.title} seek {seek.id}: {count} of {seek.players} players now "
            f"({names}).\nIt starts when {more}.\n" + (f"{start}\n" if start else "")
            + f"To withdraw it, send: {game.name} unseek {seek.id} {seeker.userid} PASSWORD\n"))
        return f"{user.userid} joined {game.title} seek {seek.id}."

    def check_joiner(self, ctx: Context, game: Game, user: User, seek: Seek) -> None:
        """A joiner who refuses the game, or is at their limit, cannot join."""
        pref = preference(ctx, user, game)
        pending = 0
        if pref is not None and pref.limit is not None:
            pending = sum(user.id in other.joined for other in open_seeks(ctx, Seek.game_type == game.name)
                          if other.id != seek.id)
        block = blocked(ctx, game, user, pending)
        if block is None:
            return
        if block.refuse:
            raise CommandError(
                fit(f"{user.userid} {block.why}, and joining a seek accepts one."),
                fit(f"To accept challenges of {game.title} again, send: {block.remedy}"))
        leave = f", or leave a seek ({game.name} unseek SEEK {user.userid} PASSWORD)" if pending else ""
        raise CommandError(
            fit(f"{user.userid} {block.why}, so cannot join another seek of {game.title}."),
            fit(f"Wait until one of those boards ends ('{game.name} games {user.userid}' lists them){leave}.\n"
                f"To change the limit, send: {block.remedy}"))


@command
class Start(GameCommand):
    name = "start"
    arguments = "SEEK USERID PASSWORD [ROBOT ...]"
    summary = "start your seek now; robots you name fill empty seats"
    description = ("The board needs the fewest players the game is played by: the seeker, those\n"
                   "who joined, and the robot players named (robot1 weak to robot3 strong;\n"
                   "'players' lists them).")
    min_args, max_args = 3, None
    password_args = (2,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        number, userid, password, *names = args
        seek = load_seek(ctx, game, number, self)
        user = authenticate(ctx, userid, password)
        seeker = seek.user
        present = joiners(ctx.session, seek)
        if user.id != seeker.id:
            instead = (f"It starts when it is full, or when {seeker.userid} starts it.\n"
                       f"To leave it, send: {game.name} unseek {seek.id} {user.userid} PASSWORD" if user in present
                       else f"To join it, send: {game.name} join {seek.id} {user.userid} PASSWORD")
            raise CommandError(f"Only {seeker.userid}, who posted seek {seek.id}, can start it.", fit(instead))
        free = seek.players - 1 - len(present)
        if len(names) > free:
            raise CommandError(
                fit(f"Seek {seek.id} is for {seek.players} players and has {1 + len(present)}: "
                    f"there {'is' if free == 1 else 'are'} {plural(free, 'empty seat')}, not {len(names)}."),
                fit(f"Name at most {free} robots: {game.name} start {seek.id} {user.userid} PASSWORD ROBOT ..."))
        seated_robots = self.robots(ctx, game, seek, user, names)
        count = 1 + len(present) + len(seated_robots)
        if count < game.min_players:
            hint = how_to_start(ctx, game, seek, count)
            raise CommandError(
                fit(f"Seek {seek.id} has {plural(count, 'player')}; {game.title} needs at least "
                    f"{game.min_players}."),
                fit(f"Wait for others to join.\n{hint}" if hint else "Wait for others to join."))
        check_joiners(ctx, game, seek, present, user)
        check_welcome(ctx, game, user, seated_robots)
        why = f"{seeker.userid} started seek {seek.id}"
        if seated_robots:
            why += f" with {listed([robot.userid for robot in seated_robots])}"
        return begin(ctx, game, seek, user, present + seated_robots, why + ".")

    def robots(self, ctx: Context, game: Game, seek: Seek, user: User, names: list[str]) -> list[User]:
        """The robot players named, checked."""
        available = robot_names(ctx.session) or "none on this server"
        found: list[User] = []
        for name in names:
            robot = find_user(ctx.session, name)
            if robot is None:
                raise CommandError(f"There is no user {echoed(name)}.", f"The robot players are: {available}.")
            if robot.robot is None:
                raise CommandError(
                    fit(f"{robot.userid} is not a robot player: only robots are named to fill seats."),
                    fit(f"The robot players are: {available}.\nOthers take a seat with:\n"
                        f"  {game.name} join {seek.id} USERID PASSWORD"))
            if robot.disabled:
                raise CommandError(f"The robot {robot.userid} is closed: it plays no new games.",
                                   f"The robot players are: {available}.")
            if robot in found:
                raise CommandError(f"{robot.userid} is named twice.", "Name each robot once.")
            found.append(robot)
        return found


@command
class Unseek(GameCommand):
    name = "unseek"
    arguments = "SEEK USERID PASSWORD"
    summary = "withdraw your open challenge, or leave one you joined"
    description = "Those who joined your seek, or its seeker if you leave it, are mailed."
    min_args = max_args = 3
    password_args = (2,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        number, userid, password = args
        seek = load_seek(ctx, game, number, self)
        user = authenticate(ctx, userid, password)
        seeker = seek.user
        present = joiners(ctx.session, seek)
        label = f"{game.title} seek {seek.id}"
        if user.id == seeker.id:
            seek.status = "withdrawn"
            told = (f" {listed([j.userid for j in present])}, who joined it, {'is' if len(present) == 1 else 'are'}"
                    " told." if present else "")
            ctx.reply(f"{game.title} unseek", fit(
                f"{label} is withdrawn.{told}\n"
                f"To post it again, send:\n  {seek_line(ctx.config, game, seek, user.userid)}\n"), also_to=user.emails)
            for joiner in present:
                ctx.notify(joiner.emails, f"{label} withdrawn", fit(
                    f"{seeker.userid} withdrew {label}, which you had joined.\n"
                    f"Send '{game.name} seeks' for the open seeks, or post your own:\n"
                    f"  {seek_line(ctx.config, game, seek, joiner.userid)}\n"))
            return f"{label} withdrawn."
        if user not in present:
            raise CommandError(f"{user.userid} has not joined seek {seek.id}, and only {seeker.userid} can withdraw it.",
                               f"To join it, send: {game.name} join {seek.id} {user.userid} PASSWORD")
        present.remove(user)
        seek.joined = [joiner.id for joiner in present]
        count = 1 + len(present)
        ctx.reply(f"{game.title} unseek", fit(
            f"{user.userid} left {label} of {seeker.userid}.\n"
            f"To join it again, send: {game.name} join {seek.id} {user.userid} PASSWORD\n"), also_to=user.emails)
        start = how_to_start(ctx, game, seek, count)
        ctx.notify(seeker.emails, f"{label}: {user.userid} left", fit(
            f"{user.userid} left your {label}: {count} of {seek.players} players now.\n"
            + (f"{start}\n" if start else "")
            + f"To withdraw it, send: {game.name} unseek {seek.id} {seeker.userid} PASSWORD\n"))
        return f"{user.userid} left {label}."


# --- expiry, by the scheduler --------------------------------------------------------------


def due_seek(session: Session, now) -> Seek | None:
    """The open seek that expires first by `now`, claimed (as `scheduler.next_due`)."""
    return session.scalar(select(Seek).where(Seek.status == "open", Seek.expires_at <= now)
                          .order_by(Seek.expires_at, Seek.id).limit(1).with_for_update(skip_locked=True))


def expire(session: Session, config: Config, seek: Seek) -> None:
    """Close `seek` at its expiry and mail the seeker and those who joined it how to
    post it again (clock: the expiry)."""
    seek.status = "expired"
    game = get_game(seek.game_type)
    if game is None:  # a game this server no longer plays
        return
    seeker, present = seek.user, joiners(session, seek)
    label = f"{game.title} seek {seek.id}"
    days = plural(round((seek.expires_at - seek.created_at) / timedelta(days=1)), "day")
    had = ("nobody joined it" if not present else
           f"{listed([j.userid for j in present])} joined it, but it did not start")
    mails = []
    if not seeker.disabled:
        mails.append(Mail(seeker.emails, f"{label} expired", fit(
            f"Your {label} expired after {days}: {had}.\n"
            f"To post it again, send:\n  {seek_line(config, game, seek, seeker.userid)}\n")))
    for joiner in present:
        mails.append(Mail(joiner.emails, f"{label} expired", fit(
            f"{seeker.userid}'s {label}, which you joined, expired after {days} without starting.\n"
            f"Send '{game.name} seeks' for the open seeks, or post one like it yourself:\n"
            f"  {seek_line(config, game, seek, joiner.userid)}\n")))
    queue_mails(session, config, mails, f"s{seek.id}-expired", seek.expires_at)

"""Challenges a player may turn down: `GAME decline`, and what a player accepts of a
game type: `GAME refuse`, `GAME welcome`, `GAME limit`.

decline BOARD USERID PASSWORD
    A challenged player (any seat but the first) calls off a running board before
    their own first move, i.e. while the log holds no action of kind "move" of theirs.
    If the game goes on without them (the board would have no result yet after their
    resignation: Survive with three or more players left), they leave it: a
    resignation is logged and every player gets the board with the note "bob declined
    and left the game.". Otherwise (every two-player board, and a Survive board with
    only two players left) the board ends with no result, as an admin's `abort` ends
    it: status "finished", result "Game declined by bob: no result.", no deadlines, not
    rated, and every player gets the board. The challenger cannot decline: they chose
    the game, and could otherwise call off a board for free after seeing the
    opponents' first moves; they, and anyone who has moved, are told to resign. A
    player who has left the board already cannot decline it again.

refuse USERID PASSWORD / welcome USERID PASSWORD
    From `refuse` on, every challenge of the game that names the user is refused, with
    an error to the challenger; `welcome` takes it back. `welcome` clears the refusal
    only: a limit set before stays.

limit USERID PASSWORD N|none
    A challenge naming the user is refused while the user plays N (1 to 999) or more
    running boards of the game that others started (the user is not in seat 0);
    `none` removes the cap. The boards running already are not touched.

A user's own challenges are never refused or limited. Sending a setting that is in
force already is an error that changes nothing. The settings live in one
`Preference` row per user and game type, removed again when it is back to the
defaults (no refusal, no limit). Every reply says what is in force from now on.

`check_welcome` is what `GAME challenge` calls for the named opponents.
"""

from __future__ import annotations

from sqlalchemy import func, select

from ..games import Game
from ..games.base import echoed
from ..robots import ROBOT_BOARDS
from ..play import current_state, record_action, refresh_timers, start_game
from ..store.models import GameRecord, Preference, Seat, User
from ..store.movelog import log_of
from ..store.repo import find_user
from .base import CommandError, Context, GameCommand, authenticate, command, fit
from .boards import load_player, send_boards

MAX_LIMIT = 999


def preference(ctx: Context, user: User, game: Game) -> Preference | None:
    return ctx.session.scalar(select(Preference).where(Preference.user_id == user.id,
                                                       Preference.game_type == game.name))


def started_by_others(ctx: Context, user: User, game: Game) -> int:
    """The running boards of `game` where `user` has a seat other than the challenger's."""
    return ctx.session.scalar(
        select(func.count(Seat.id)).join(GameRecord, Seat.game_id == GameRecord.id)
        .where(Seat.user_id == user.id, Seat.seat > 0, GameRecord.game_type == game.name,
               GameRecord.status == "active")) or 0


def boards(n: int, game: Game) -> str:
    return f"{n} running {game.title} board{'' if n == 1 else 's'}"


def boards_with_robots(ctx: Context, user: User) -> int:
    """The running boards, of any game, with a robot, that `user` plays or started."""
    with_robot = select(Seat.game_id).join(User, Seat.user_id == User.id).where(User.robot.is_not(None))
    seated = select(Seat.game_id).where(Seat.user_id == user.id)
    return ctx.session.scalar(
        select(func.count(GameRecord.id)).where(
            GameRecord.status == "active", GameRecord.id.in_(with_robot),
            GameRecord.id.in_(seated) | (GameRecord.starter_id == user.id))) or 0


def named_players(ctx: Context, userids: list[str], challenger: User | None) -> list[User]:
    """The users `userids` name, after the `challenger` if one sits first; or the
    error saying which name cannot play."""
    players = [challenger] if challenger is not None else []
    for name in userids:
        player = find_user(ctx.session, name)
        if player is None:
            raise CommandError(f"There is no user {name}.",
                               f"Check the spelling of your {'opponents' if challenger else 'players'}' userids.")
        if player.disabled:
            raise CommandError(f"The account {player.userid} is closed: it plays no new games.",
                               "Challenge someone else.")
        if player is challenger:
            raise CommandError("You cannot challenge yourself.", "Name your opponents' userids after your password.")
        if player in players:
            raise CommandError(f"{player.userid} is named twice.", "Name each player once.")
        players.append(player)
    return players


def check_player_count(game: Game, players: list[User], usage: str) -> None:
    if not game.min_players <= len(players) <= game.max_players:
        count = (str(game.min_players) if game.min_players == game.max_players
                 else f"{game.min_players} to {game.max_players}")
        raise CommandError(f"{game.title} is played by {count} players, not {len(players)}.", f"Send: {usage}")


def check_welcome(ctx: Context, game: Game, challenger: User, opponents: list[User]) -> None:
    """Refuse the challenge if an opponent refuses challenges of `game`, or plays as
    many running boards of it that others started as they accept. The challenger's own
    settings do not count. Robots accept every challenge, but a player may have at
    most ROBOT_BOARDS running boards with robots: their thinking is the server's
    dearest work, and it is shared."""
    if any(opponent.robot for opponent in opponents):
        running = boards_with_robots(ctx, challenger)
        if running >= ROBOT_BOARDS:
            raise CommandError(f"{challenger.userid} plays {running} running boards with robots, "
                               f"the most one player may.",
                               "Finish one first, or challenge a person: send 'players' for a list.")
    for opponent in opponents:
        pref = preference(ctx, opponent, game)
        if pref is None:
            continue
        if pref.refuse:
            raise CommandError(
                f"{opponent.userid} does not accept challenges of {game.title}.",
                f"Challenge someone else, or ask {opponent.userid} (message USERID PASSWORD {opponent.userid}) "
                f"to send: {game.name} welcome {opponent.userid} PASSWORD")
        if pref.limit is not None:
            running = started_by_others(ctx, opponent, game)
            if running >= pref.limit:
                raise CommandError(
                    f"{opponent.userid} plays {boards(running, game)} that others started "
                    f"(limit: {pref.limit}).",
                    f"Wait until one of them ends ('{game.name} games {opponent.userid}' lists them), "
                    "or challenge someone else.")


def starter_of(record: GameRecord) -> int:
    """The user id of who started `record` (the first seat, unless a rematch)."""
    return record.starter_id if record.starter_id is not None else record.seats[0].user_id


def challenged_notes(game: Game, record: GameRecord, state, why: str = "") -> dict[int, str]:
    """What the new board mail tells each challenged player (every seat but the
    starter's): who challenged them (or `why` the board is there), how to decline,
    and that a reply to the mail holding just a move plays it (its Reply-To is the
    player's own)."""
    starter = starter_of(record)
    why = why or f"{next(s.user.userid for s in record.seats if s.user_id == starter)} challenged you to {game.title}."
    notes = {}
    for seat in record.seats:
        if seat.user_id == starter:
            continue
        reply = ("To move, reply to this mail with just your move." if seat.seat in game.to_act(state)
                 else "Once it is your turn, a reply to this mail with just your move plays it.")
        notes[seat.seat] = fit(f"{why} Move, or decline:\n"
                               f"  {game.name} decline {record.board} {seat.user.userid} PASSWORD\n{reply}")
    return notes


# --- decline -------------------------------------------------------------------------


@command
class Decline(GameCommand):
    name = "decline"
    arguments = "BOARD USERID PASSWORD"
    summary = "call off a game you were challenged to, before your first move"
    description = ("A two-player board ends with no result and is not rated; where the game goes on "
                   "without you (Survive with three or more players left), you leave it.\n"
                   "The challenger, and a player who has moved, resign instead.")
    min_args = max_args = 3
    password_args = (2,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        board, userid, password = args
        record, user, seat = load_player(ctx, game, board, userid, password, running=True)
        label = f"{game.title} board {record.board}"
        resign = f"To give the game up, send: {game.name} resign {record.board} {user.userid} PASSWORD"
        if user.id == starter_of(record):
            raise CommandError(f"{user.userid} started {label}, so cannot decline it.", resign,
                               board=record, viewer=user)
        state = current_state(record)
        if seat in state.resigned:
            raise CommandError(f"{user.userid} has left {label} already.",
                               f"Send '{game.name} games {user.userid}' for your boards.", board=record, viewer=user)
        if any(move.seat == seat and move.kind == "move" for move in log_of(record)):
            raise CommandError(f"{user.userid} has moved on {label}, so it is too late to decline it.", resign,
                               board=record, viewer=user)
        without = game.restore(game.serialise(state))
        game.resign(without, seat)
        if game.result(without) is None:  # the game goes on without the player
            record_action(ctx.session, record, state, seat, "resign", "resign", ctx.comment, ctx.now, ctx.inbound_id)
            send_boards(ctx, record, state, user, [(user.userid, ctx.comment)],
                        note=f"{user.userid} declined and left the game.")
            return f"{user.userid} declined and left {label}."
        record.status, record.updated_at = "finished", ctx.now
        record.result = f"Game declined by {user.userid}: no result."  # the status line from now on
        refresh_timers(record, state, ctx.now)  # no deadlines on a board that is over
        send_boards(ctx, record, state, user, [(user.userid, ctx.comment)])
        return f"{label} declined by {user.userid}."


# --- rematch ---------------------------------------------------------------------------


@command
class Rematch(GameCommand):
    name = "rematch"
    arguments = "BOARD USERID PASSWORD"
    summary = "after a board's end: a new one with the same players, seats rotated"
    description = ("Each player moves one seat on (in a two-player game: the other one starts).\n"
                   "The others get the new board mail and may decline it, as a challenge.")
    min_args = max_args = 3
    password_args = (2,)

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        board, userid, password = args
        record, user, _seat = load_player(ctx, game, board, userid, password)
        label = f"{game.title} board {record.board}"
        if record.status == "active":
            raise CommandError(f"{label} is still running: a rematch comes after its end.",
                               f"To end it now, send: {game.name} resign {record.board} {user.userid} PASSWORD",
                               board=record, viewer=user)
        players = [seat.user for seat in record.seats]
        players = players[1:] + players[:1]
        closed = [player.userid for player in players if player.disabled]
        if closed:
            raise CommandError(f"The account {closed[0]} is closed: it plays no new games.",
                               f"Challenge the others: {game.name} challenge {user.userid} PASSWORD OPPONENT ...")
        check_welcome(ctx, game, user, [player for player in players if player is not user])
        new, state = start_game(ctx.session, ctx.config, game, players, dict(record.params), ctx.now,
                                record.nag_after, record.forfeit_after, starter=user)
        why = f"{user.userid} asked for a rematch of {label}."
        send_boards(ctx, new, state, user, [(user.userid, ctx.comment)], new=True,
                    notes=challenged_notes(game, new, state, why))
        return f"Rematch of {label}: new board {new.board}."


# --- what a player accepts -------------------------------------------------------------


class SetPreference(GameCommand):
    """`refuse`, `welcome` and `limit`: change one user's Preference for a game."""

    password_args = (1,)

    def change(self, ctx: Context, game: Game, user: User, pref: Preference | None, args: list[str]) -> tuple[bool, int | None]:
        """The new (refuse, limit), or the error if nothing would change."""
        raise NotImplementedError

    def run(self, ctx: Context, args: list[str], game: Game) -> str:
        userid, password, *rest = args
        user = authenticate(ctx, userid, password)
        pref = preference(ctx, user, game)
        refuse, limit = self.change(ctx, game, user, pref, rest)
        if refuse or limit is not None:
            if pref is None:
                pref = Preference(user_id=user.id, game_type=game.name)
                ctx.session.add(pref)
            pref.refuse, pref.limit = refuse, limit
        elif pref is not None:
            ctx.session.delete(pref)
        ctx.reply(f"{game.title} {self.name}", in_force(ctx, game, user, refuse, limit), also_to=user.emails)
        return f"{game.title} challenges to {user.userid}: {state_word(refuse, limit)}."


def state_word(refuse: bool, limit: int | None) -> str:
    return "refused" if refuse else "welcome" if limit is None else f"limited to {limit}"


def in_force(ctx: Context, game: Game, user: User, refuse: bool, limit: int | None) -> str:
    """What a reply says: the settings now in force, and how to change them."""
    who = user.userid
    if refuse:
        text = f"{who} refuses all challenges of {game.title} from now on.\n"
    else:
        text = f"{who} accepts challenges of {game.title} from now on.\n"
    if limit is None:
        text += "Limit: none.\n"
    else:
        text += (f"Limit: at most {boards(limit, game)} that others started "
                 f"({who} plays {started_by_others(ctx, user, game)} now).\n")
    text += "\n"
    if refuse:
        text += f"To accept challenges again, send: {game.name} welcome {who} PASSWORD\n"
    else:
        text += f"To refuse all challenges, send: {game.name} refuse {who} PASSWORD\n"
    text += f"To change the limit, send: {game.name} limit {who} PASSWORD N (or none)\n"
    return text


@command
class Refuse(SetPreference):
    name = "refuse"
    arguments = "USERID PASSWORD"
    summary = "refuse every challenge of this game from now on"
    description = "The challenger is told; your own challenges are not affected. 'GAME welcome' takes it back."
    min_args = max_args = 2

    def change(self, ctx, game, user, pref, args):
        if pref is not None and pref.refuse:
            raise CommandError(f"{user.userid} refuses challenges of {game.title} already.",
                               f"To accept them again, send: {game.name} welcome {user.userid} PASSWORD")
        return True, pref.limit if pref is not None else None


@command
class Welcome(SetPreference):
    name = "welcome"
    arguments = "USERID PASSWORD"
    summary = "accept challenges of this game again after 'refuse'"
    description = "A limit set with 'GAME limit' stays in force."
    min_args = max_args = 2

    def change(self, ctx, game, user, pref, args):
        if pref is None or not pref.refuse:
            raise CommandError(f"{user.userid} accepts challenges of {game.title} already.",
                               f"To refuse them all, send: {game.name} refuse {user.userid} PASSWORD")
        return False, pref.limit


@command
class Limit(SetPreference):
    name = "limit"
    arguments = "USERID PASSWORD N|none"
    summary = "accept challenges only while you play fewer than N boards others started"
    description = (f"N is from 1 to {MAX_LIMIT}; 'none' removes the limit. Boards running already go on, "
                   "and your own challenges are never limited.")
    min_args = max_args = 3

    def change(self, ctx, game, user, pref, args):
        (word,) = args
        current = pref.limit if pref is not None else None
        usage = f"Send: {game.name} limit {user.userid} PASSWORD N, with N from 1 to {MAX_LIMIT}, or none"
        if word.lower() == "none":
            limit = None
        elif word.isdecimal() and len(word) <= 9:
            limit = int(word)
            if limit == 0:
                raise CommandError("A limit of 0 would refuse every challenge.",
                                   f"To refuse them all, send: {game.name} refuse {user.userid} PASSWORD")
            if limit > MAX_LIMIT:
                raise CommandError(f"The limit must be from 1 to {MAX_LIMIT}, not {limit}.", usage)
        else:
            raise CommandError(f"'{echoed(word)}' is not a limit.", usage)
        if limit == current:
            what = "no limit" if limit is None else f"a limit of {limit}"
            raise CommandError(f"{user.userid} has {what} on challenges of {game.title} already.",
                               "Nothing was changed.")
        return pref is not None and pref.refuse, limit

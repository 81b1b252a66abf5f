"""Mail commands as small self-describing classes, and the registry built from them.

A command declares its name, its arguments, a one-line summary and a description;
`help` and the arity checks are generated from that metadata (after GNU Mailman's
email commands). A duplicate name stops start-up.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from sqlalchemy.orm import Session

from sqlalchemy import delete

from ..config import Config
from ..keys import make_tag, tag_valid, tagged_address
from ..mail.outbound import Mail
from ..mail.parse import ParsedMail
from ..mail.text import fit
from ..passwords import verify_password
from ..store.models import RateEvent, User
from ..store.repo import PASSWORD_WINDOW, find_user, recent_events

if TYPE_CHECKING:
    from ..games import Game



class CommandError(Exception):
    """What was wrong and what to send instead; the command's changes are undone.

    `board` (a GameRecord) adds the board to the error mail, seen by `viewer`."""

    def __init__(self, problem: str, instead: str = "", *, board: Any = None, viewer: User | None = None):
        super().__init__(problem)
        self.problem = problem
        self.instead = instead
        self.board = board
        self.viewer = viewer
        self.game: Game | None = None  # set by the worker: which game's subject to use


@dataclass
class Context:
    """What a command may use: the session, the configuration, the clock and the mail."""

    session: Session
    config: Config
    now: datetime
    mail: ParsedMail
    inbound_id: int
    comment: str = ""  # the text that goes out with the board (or relayed by `message`)
    board: Any = None  # the GameRecord the command is about, once known: errors show it
    game: Game | None = None  # the game a game command is about: its errors' subjects name it
    after_error: list[Any] = field(default_factory=list)  # rows to keep even when the command fails
    after_error_mails: list[Mail] = field(default_factory=list)  # mails to send even when it fails
    replies: list[Mail] = field(default_factory=list)  # answers to the sender
    notices: list[Mail] = field(default_factory=list)  # mails to others (board mails, relays)
    wrong_passwords: int | None = None  # from the sender's address in the last hour, if counted already

    def reply(self, subject: str, body: str, also_to: list[str] = (), boards: list = ()) -> None:
        """Answer the sender (and `also_to`, e.g. the registered addresses of a user
        who sent from elsewhere); `boards`: the boards (`play.Board`) `body` shows."""
        to = [self.mail.reply_to] + [a for a in also_to if a.lower() != self.mail.reply_to.lower()]
        self.replies.append(Mail(to=to, subject=subject, body=body, boards=list(boards)))

    def notify(self, to: list[str], subject: str, body: str, reply_to: str | None = None) -> None:
        if to:
            self.notices.append(Mail(to=list(to), subject=subject, body=body, reply_to=reply_to))


class Command:
    """An account command; game commands subclass `GameCommand`."""

    name: ClassVar[str]  # one or more words, lower case: "change password"
    arguments: ClassVar[str] = ""  # for the usage line: "USERID OLD NEW"
    summary: ClassVar[str]
    description: ClassVar[str] = ""
    min_args: ClassVar[int] = 0
    max_args: ClassVar[int | None] = 0  # None: any number
    password_args: ClassVar[tuple[int, ...]] = ()  # argument positions to mask in quotes
    takes_text: ClassVar[bool] = False  # the lines below it are its text (message, broadcast)
    admin_only: ClassVar[bool] = False  # `help` lists it apart, under "Admins only"

    def label(self, game: Game | None = None) -> str:
        """The command's name as written: `change password`, `superwari move`."""
        return self.name

    def usage(self, game: Game | None = None) -> str:
        return " ".join(part for part in (self.label(game), self.arguments) if part)

    def check_arity(self, args: list[str], game: Game | None = None) -> None:
        if len(args) < self.min_args or (self.max_args is not None and len(args) > self.max_args):
            count = "too few" if len(args) < self.min_args else "too many"
            raise CommandError(f"{self.label(game)}: {count} words for this command.",
                               f"Send: {self.usage(game)}")

    def run(self, ctx: Context, args: list[str]) -> str:
        """Do the work, queue the mails, return a one-line summary for `pbmserv results`."""
        raise NotImplementedError


class GameCommand(Command):
    """A command written after a game's name: `superwari move 101 ...`."""

    def label(self, game: Game | None = None) -> str:
        return f"{game.name if game is not None else 'GAME'} {self.name}"

    def run(self, ctx: Context, args: list[str], game: Game) -> str:  # type: ignore[override]
        raise NotImplementedError


account_commands: dict[str, Command] = {}
game_commands: dict[str, GameCommand] = {}


def command(cls: type[Command]) -> type[Command]:
    """Class decorator that registers a command; a duplicate name is a start-up error."""
    registry: dict[str, Any] = game_commands if issubclass(cls, GameCommand) else account_commands
    if cls.name in registry:
        raise RuntimeError(f"two commands are registered as {cls.name!r}")
    registry[cls.name] = cls()
    return cls


_loaded = False
FIRST = ["account", "admin", "game"]


_ready = False
_loading = threading.RLock()  # the worker, the scheduler and the listener may ask at once


def load_commands() -> None:
    """Import every command module, once; another thread asking meanwhile waits until
    the registries are whole (a module imported here may ask again: it goes on)."""
    global _loaded, _ready
    if _ready:
        return
    with _loading:
        if _loaded:
            return
        _loaded = True
        from .. import commands as package

        for module in pkgutil.iter_modules(package.__path__):
            if module.name != "base":
                importlib.import_module(f"{package.__name__}.{module.name}")
        for registry in (account_commands, game_commands):  # the order of `help`: everyday commands first
            ordered = sorted(registry.items(), key=lambda item: help_rank(item[1]))
            registry.clear()
            registry.update(ordered)
        _ready = True


def help_rank(cmd: Command) -> tuple[int, str]:
    """Commands of the FIRST modules first, the others by module; within a module, as
    they are written."""
    module = type(cmd).__module__.rpartition(".")[2]
    return (FIRST.index(module), "") if module in FIRST else (len(FIRST), module)


def resolve(words: list[str]) -> tuple[Command, Game | None, list[str]] | None:
    """The command a line's words name, with its game and arguments; None if the words
    name no command. Raises CommandError for a command family with a wrong second word
    (`change colour ...`), so that such a line is answered rather than ignored."""
    from ..games import get_game

    load_commands()
    if not words:
        return None
    first = words[0].lower()
    game = get_game(first)
    if game is not None:
        if len(words) > 1 and words[1].lower() in game_commands:
            return game_commands[words[1].lower()], game, words[2:]
        return None
    if len(words) > 1 and f"{first} {words[1].lower()}" in account_commands:
        return account_commands[f"{first} {words[1].lower()}"], None, words[2:]
    if first in account_commands:
        return account_commands[first], None, words[1:]
    family = [c for name, c in account_commands.items() if name.split()[0] == first]
    if family:
        raise CommandError(
            f"'{first}' must be followed by one of: {', '.join(c.name.split()[1] for c in family)}.",
            "Send one of:\n" + "\n".join(f"  {c.usage()}" for c in family),
        )
    return None


def authenticate(ctx: Context, userid: str, password: str, among: list[User] = ()) -> User:
    """The user whose password this is, or a CommandError saying which part is wrong.

    Wrong passwords are limited per sending address, and per user from addresses not
    registered to that user. Failures are counted even though the command's changes
    are undone. A forger can thus lock a player's own address for an hour, so when a
    lock starts the player is told, and a reply to that mail lifts it (and reply to
    play never passes here)."""
    user = next((known for known in among if known.userid_key == userid.lower()), None) or \
        find_user(ctx.session, userid)  # `among`: users loaded already (a board's players)
    if user is None:
        raise CommandError(f"There is no user {userid}.",
                           "Check the spelling of the userid, or sign up first: signup USERID PASSWORD")
    if user.robot:
        raise CommandError(f"{user.userid} is a robot player: it has no password, and it moves by itself.",
                           f"To play it, send: GAME challenge USERID PASSWORD {user.userid}")
    if user.disabled:
        raise CommandError(f"The account {user.userid} is closed.", ask_admins(ctx, "to open it again", closed=True))
    limit = ctx.config.limits.wrong_passwords_per_hour
    sender = ctx.mail.sender.lower()
    stranger = sender not in {a.lower() for a in user.emails}
    counted = ctx.wrong_passwords
    counts = {f"address:{sender}": counted if counted is not None else
              recent_events(ctx.session, "wrong-password", f"address:{sender}", ctx.now, PASSWORD_WINDOW)}
    if counts[f"address:{sender}"] >= limit:
        raise CommandError(fit(f"Too many wrong passwords were sent from {ctx.mail.sender} in the last hour."),
                           "Wait an hour, then send the command again with the right password.")
    if stranger:
        counts[f"user:{user.userid_key}"] = recent_events(ctx.session, "wrong-password", f"user:{user.userid_key}",
                                                          ctx.now, PASSWORD_WINDOW)
        if counts[f"user:{user.userid_key}"] >= limit:
            raise CommandError(fit(f"Too many wrong passwords for {user.userid} came from other addresses in the "
                                   "last hour."), f"Send the command from an address registered to {user.userid}, or wait an hour.")
    if not verify_password(user.password_hash, password):
        ctx.after_error += [RateEvent(kind="wrong-password", key=key, at=ctx.now) for key in counts]
        counts = {key: count + 1 for key, count in counts.items()}
        from_sender, from_strangers = counts[f"address:{sender}"], counts.get(f"user:{user.userid_key}")
        if limit in counts.values():
            tell_of_lock(ctx, user, from_sender, from_strangers, limit)
            raise CommandError(f"Wrong password for {user.userid}.", fit(
                f"That was the last try: for an hour, commands with a password are refused from "
                f"{locked_from(ctx, user, from_sender, from_strangers, limit)}.\n") + lift_lock(user))
        left = limit - max(counts.values())
        raise CommandError(f"Wrong password for {user.userid}.", fit(
            "Send the command again with your password (passwords are case-sensitive).\n"
            f"{tries(left)} left: after {limit} wrong passwords in an hour, commands with a password are "
            "refused for an hour.\n"
            f"If you forgot your password, send: forgot {user.userid}"))
    return user


def ask_admins(ctx: Context, task: str, userid: str = "USERID", closed: bool = False, but: str = "") -> str:
    """How to ask the server's admins (`but` one) `task` ("to do it"): their userids
    and the `message` command to write to one with, or that this server has none. A
    `closed` account cannot send `message`: the writer needs an open one."""
    admins = [user.userid for name in ctx.config.server.admins if name.lower() != but.lower()
              and (user := find_user(ctx.session, name)) is not None and not user.disabled]
    if not admins:
        return f"This server has no {'other ' if but else ''}admin, so nobody can be asked {task}."
    named = admins[0] if len(admins) == 1 else f"{', '.join(admins[:-1])} or {admins[-1]}"
    account = " from an open account (sign up a new one if need be)" if closed else ""
    return fit(f"Ask an admin of this server {task}: {named}. Send{account}:\n"
               f"  message {userid} PASSWORD {admins[0]}\n"
               "with your request on the lines below it.")


def tries(count: int) -> str:
    return f"{count} {'try' if count == 1 else 'tries'}"


def locked_from(ctx: Context, user: User, from_sender: int, from_strangers: int | None, limit: int) -> str:
    """Where commands for `user` with a password are refused from, once wrong
    passwords reach `limit` (from the sender, or from any address not registered)."""
    refused = ([ctx.mail.sender] if from_sender >= limit else []) + \
        ([f"any address not registered to {user.userid}"] if (from_strangers or 0) >= limit else [])
    return " and from ".join(refused)


def lift_lock(user: User) -> str:
    """How to lift a wrong-password lock on `user`, and to reset a forgotten password."""
    lift = (f'To lift it now, reply to the mail "pbmserv lock" sent to the registered addresses of {user.userid}: '
            "commands from them work again." if user.emails else "Wait an hour for it to end.")
    return fit(f"{lift}\nIf you forgot your password, send: forgot {user.userid}")


def tell_of_lock(ctx: Context, user: User, from_sender: int, from_strangers: int | None, limit: int) -> None:
    """Mail the owner (at most once an hour) that wrong passwords locked commands out,
    with an address to lift it: a forger who locks the player's own address out cannot
    read it, so the player keeps a way in."""
    key = f"user:{user.userid_key}"
    if not user.emails or recent_events(ctx.session, "lock-notice", key, ctx.now, PASSWORD_WINDOW):
        return
    ctx.after_error.append(RateEvent(kind="lock-notice", key=key, at=ctx.now))
    strangers = "" if from_strangers is None else f", {from_strangers} from addresses not registered to it"
    tag = make_tag(ctx.session, "u", str(user.id), bind=user.password_hash)
    ctx.after_error_mails.append(Mail(to=user.emails, subject="pbmserv lock", body=fit(
        f"Commands for {user.userid} with a wrong password came in the last hour: "
        f"{from_sender} from {ctx.mail.sender}{strangers}.\n\n"
        f"For an hour, commands with a password are refused from "
        f"{locked_from(ctx, user, from_sender, from_strangers, limit)}.\n"
        "Moves sent by replying to a board mail still work.\n\n"
        "To lift the lock now, reply to this mail: nothing else is needed.\n"
        "If the wrong passwords were not yours, someone is guessing your password:\n"
        "keep it long and secret (change password USERID OLD NEW).\n"),
        reply_to=tagged_address(ctx.config.server.address, tag)))


def unlock_by_reply(ctx: Context, payload: str, given_mac: str) -> str:
    """Lift the wrong-password locks of the user a lock mail (`pbmserv+u-...`) went to:
    the reply must come from one of that user's confirmed addresses."""
    user = ctx.session.get(User, int(payload)) if payload.isdecimal() and len(payload) <= 12 else None
    if user is None or not tag_valid(ctx.session, "u", payload, given_mac, bind=user.password_hash):
        raise CommandError("This reply address lifts no lock: the password changed since the lock\n"
                           "mail was sent, or the address is not one of ours.",
                           "Wait for the hour to pass, or send the command from a registered address.")
    confirmed = [a.address_key for a in user.addresses if a.confirmed]
    if ctx.mail.sender.lower() not in confirmed:
        raise CommandError(f"Only an address registered to {user.userid} can lift its lock.",
                           "Reply to the lock mail from the address it was sent to.")
    keys = [f"user:{user.userid_key}"] + [f"address:{address}" for address in confirmed]
    ctx.session.execute(delete(RateEvent).where(RateEvent.kind == "wrong-password", RateEvent.key.in_(keys)))
    ctx.reply("pbmserv unlock", f"Commands for {user.userid} with its password are accepted again.\n",
              also_to=user.emails)
    return f"Lock on {user.userid} lifted."


def relay_reply_address(ctx: Context, kind: str, reader: User, about: int) -> str:
    """The Reply-To of a relayed mail (`m`: a message, `about` its author; `h`: a chat,
    `about` its board): an answer from `reader` goes back the same way."""
    return tagged_address(ctx.config.server.address, make_tag(ctx.session, kind, f"{reader.id}.{about}"))


def relay_replier(ctx: Context, kind: str, payload: str, given_mac: str, what: str) -> tuple[User, int]:
    """The reader a relay reply address (see `relay_reply_address`) was made for, and
    what it is about; the reply must come from one of the reader's confirmed addresses
    (a forwarded relay mail hands nothing over)."""
    reader_id, _, about = payload.partition(".")
    reader = ctx.session.get(User, int(reader_id)) if reader_id.isdecimal() and len(reader_id) <= 12 else None
    if reader is None or not about.isdecimal() or len(about) > 12 or not tag_valid(ctx.session, kind, payload, given_mac):
        raise CommandError(f"This reply address answers no {what}: it is not one of ours.",
                           "Send the command instead; send 'help' for the commands.")
    if ctx.mail.sender.lower() not in {a.address_key for a in reader.addresses if a.confirmed}:
        raise CommandError(fit(f"Replies to a {what} count only from the registered address of the player it "
                               f"was sent to."), "Send it from that address, or send the command with your password.")
    if reader.disabled:
        raise CommandError(f"The account {reader.userid} is closed.", "It sends no replies.")
    return reader, int(about)

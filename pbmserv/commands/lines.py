"""Which lines of a mail are commands, and what a line that is almost one meant.

A line is a command if its words name one (`resolve`). A line that is *almost* one —
a game's name or title first, or a near-miss of a command word or a game's name
(`superwari mvoe ...`, `superwary move ...`, `move 101 carol ...`) — is taken as an
attempt: it is answered with the closest commands instead of being read as prose
(DESIGN §2). In a body such a line must also have the words the command needs, so that
prose ("Survival is fun") stays prose.

Every lookup is capped: a word is compared only by its first MAX_WORD characters, and
each distinct word once (a mail may repeat a misspelling on thousands of lines).
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from email.message import EmailMessage

from sqlalchemy import select

from ..games import Game, game_words, games, get_game
from ..mail.parse import BOARD_SUBJECT, ParsedMail, parse_message
from ..mail.text import Masker, fit, passwords_in
from ..store.models import GameRecord, Seat, User
from .account import RELAY_SUBJECT
from .base import (Command, CommandError, Context, GameCommand, account_commands, game_commands, load_commands,
                   resolve)

GAME_CUTOFF = 0.8  # how close a word must be to a game's name or an account command's
COMMAND_CUTOFF = 0.75  # ... to a game command's name (`mvoe` is 0.75 from `move`)
MAX_SUGGESTIONS = 3
MAX_WORD = 40
MAX_SHOWN = 30  # characters of a player's word shown again in a suggestion


@dataclass
class Guess:
    """What a line that names no command was likely meant to be."""

    games: list[Game]  # the games meant; [] for an account command or a game command with no game
    commands: list[Command]  # the commands meant, closest first; [] if none is close
    args: list[str]  # the words after the command word(s)


def close_names(word: str, names: object, cutoff: float) -> list[str]:
    """The names `word` most likely misspells, closest first."""
    return difflib.get_close_matches(word, list(names), n=MAX_SUGGESTIONS, cutoff=cutoff)


def guess(words: list[str]) -> Guess | None:
    """What `words` were meant to be if they look like an attempted command (see the
    module's docstring); None if they are simply not one. Only for words `resolve`
    does not take."""
    if not words:
        return None
    second = words[1] if len(words) > 1 else ""
    found = meaning(words[0].lower()[:MAX_WORD], second.lower()[:MAX_WORD], is_board(second))
    if found is None:
        return None
    named, commands, used = found
    return Guess(list(named), list(commands), words[used:])


@functools.lru_cache(maxsize=4096)
def meaning(first: str, second: str, board_second: bool) -> tuple[tuple[Game, ...], tuple[Command, ...], int] | None:
    """The games and commands a line starting `first second` likely meant, and how many
    of its words they take: looked up once for each pair of words (a mail may repeat a
    misspelling on thousands of lines)."""
    load_commands()
    game = get_game(first)
    if game is not None or (meant := close_names(first, game_words(), GAME_CUTOFF)):
        named = (game,) if game is not None else tuple(dict.fromkeys(game_words()[word] for word in meant))
        command = game_commands.get(second)
        commands = [command] if command else [game_commands[n] for n in close_names(second, game_commands, COMMAND_CUTOFF)]
        return named, tuple(commands), 2
    family = {name.split()[1]: cmd for name, cmd in account_commands.items() if name.split()[0] == first}
    if family:
        return (), tuple(family[n] for n in close_names(second, family, COMMAND_CUTOFF)), 2
    if first in game_commands and board_second:
        return (), (game_commands[first],), 1  # `move 101 carol ...`: which game?
    # a word as short as `set` is one letter from too much prose ("Sent from my iPhone")
    singles = [name for name in account_commands if " " not in name and len(name) > 3]
    meant = close_names(first, singles, GAME_CUTOFF)
    return ((), tuple(account_commands[n] for n in meant), 1) if meant else None


def fits(cmd: Command, args: list[str]) -> bool:
    return cmd.min_args <= len(args) and (cmd.max_args is None or len(args) <= cmd.max_args)


def is_attempt(words: list[str], strict: bool) -> bool:
    """Whether words that name no command look like an attempt at one; `strict` (a
    body line) also wants the words the command needs."""
    meant = guess(words)
    if meant is None:
        return False
    if not meant.commands:  # a game and no command near: `superwari xyzzy 101 ...`, but not a board's Subject
        return bool(meant.games and meant.args and is_board(meant.args[0])) and \
            not BOARD_SUBJECT.match(" ".join(words[:3]))
    return any(not strict or fits(cmd, meant.args) for cmd in meant.commands)


def is_board(word: str) -> bool:
    """A board number, with or without a #N guard: `101`, `101#3`."""
    return word.split("#")[0].isdecimal()


def is_command(words: list[str]) -> bool:
    """A Subject that starts like a command is one, even with a wrong second word
    (`change colour`) or a misspelt command, so that it is answered with what to send;
    but not the Subject of a relayed message or broadcast being answered."""
    if RELAY_SUBJECT.fullmatch(" ".join(words)):
        return False
    try:
        return resolve(words) is not None or is_attempt(words, strict=False)
    except CommandError:
        return True


def is_body_command(words: list[str]) -> bool:
    """A body line is a command if it names one, or is an attempt with the words the
    command needs: "All the best!" is prose even though `all games` is a command."""
    try:
        if resolve(words) is not None:
            return True
    except CommandError:
        pass
    return is_attempt(words, strict=True)


def takes_text(words: list[str]) -> bool:
    try:
        found = resolve(words)
    except CommandError:
        return False
    return found is not None and found[0].takes_text


def password_words(words: list[str]) -> list[str]:
    """The passwords a command line carries, so quotes of it can mask them; for a line
    that is almost a command, at the password positions of the commands it was likely
    meant to be, or of every command of its kind if none is close."""
    try:
        found = resolve(words)
    except CommandError:
        found = None
    if found is not None:
        cmd, _game, args = found
        return [args[i] for i in cmd.password_args if i < len(args)]
    meant = guess(words)
    if meant is None:
        return []
    commands = meant.commands or list((game_commands if meant.games else account_commands).values())
    return sorted({meant.args[i] for cmd in commands for i in cmd.password_args if i < len(meant.args)})


def read_command_mail(message: EmailMessage, server_address: str) -> tuple[ParsedMail, Masker]:
    """A mail's commands (mail/parse.py, with this module's tests of a line), and the
    masker of the passwords its lines carry."""
    mail = parse_message(message, is_command, takes_text, is_body_command)
    return mail, Masker(passwords_in([mail.subject, *mail.text.split("\n")], password_words), server_address)


# --- the answer to an attempt ------------------------------------------------------


def not_a_command(ctx: Context, words: list[str]) -> CommandError:
    """The error for a line that names no command: the closest commands, written with
    the player's own board and userid (never a password), or which game a `move 101
    ...` without a game's name is about."""
    meant = guess(words)
    wrote = " ".join(word[:MAX_SHOWN] for word in words[:2])
    if meant is None or not meant.commands:
        game = meant.games[0].name if meant is not None and meant.games else ""
        return CommandError(f"'{wrote}' is not a command.",
                            f"Send 'help {game}' for the rules and commands of {game}." if game
                            else "Send 'help' for the commands and 'list' for the games.")
    cmd = meant.commands[0]
    if not meant.games and isinstance(cmd, GameCommand):
        return which_game(ctx, cmd, meant.args)
    examples = [example(cmd, game, meant.args) for game in (meant.games or [None]) for cmd in meant.commands]
    examples = list(dict.fromkeys(examples))[:MAX_SUGGESTIONS]
    instead = (f"Did you mean: {examples[0]}?" if len(examples) == 1
               else "Did you mean one of these?\n" + "\n".join(f"  {line}" for line in examples))
    return CommandError(f"'{wrote}' is not a command.", instead)


def example(cmd: Command, game: Game | None, given: list[str]) -> str:
    """The command's usage with the player's words up to the first password in place of
    the placeholders: `superwari move 101 carol PASSWORD MOVE`."""
    tokens = re.sub(r"\[[^\]]*\]", "", cmd.arguments).split()  # without the optional ones
    secret = min(cmd.password_args, default=len(tokens))
    shown = [given[i][:MAX_SHOWN] if i < secret and i < len(given) else token for i, token in enumerate(tokens)]
    return " ".join([cmd.label(game), *shown])


def which_game(ctx: Context, cmd: Command, args: list[str]) -> CommandError:
    """`move 101 carol ...` names no game: the games whose board 101 has carol."""
    number = args[0].split("#")[0][:12]
    userid = args[1] if len(args) > 1 else ""
    query = select(GameRecord).where(GameRecord.board == int(number))
    if userid:
        query = query.join(Seat).join(User).where(User.userid_key == userid.lower()[:40])
    records = ctx.session.scalars(query.order_by(GameRecord.game_type).limit(MAX_SUGGESTIONS)).unique().all()
    found = [(get_game(record.game_type), record) for record in records]
    found = [(game, record) for game, record in found if game is not None]
    whose = f" with {userid[:MAX_SHOWN]} as a player" if userid else ""
    if not found:
        return CommandError(fit(f"Which game? '{cmd.name}' follows the game's name, and no board {number}{whose} "
                                "was found."),
                            fit(f"Send: {example(cmd, None, args)}, "
                                f"with GAME one of: {', '.join(games())}."))
    boards = " and ".join(f"{game.name} ({' against '.join(s.user.userid for s in record.seats)})"
                          for game, record in found)
    sends = [example(cmd, game, args) for game, _ in found]
    return CommandError(fit(f"Which game? Board {number}{whose} is {boards}."),
                        "Send: " + "\nor: ".join(sends))

"""Mailboxes of whole games, for replay tests and the bundled example.

`python tests/mailgen.py examples/superwari-game.mbox` writes the README's example.
Moves are random legal ones from a seeded RNG, so the same call writes the same mail.
"""

from __future__ import annotations

import email.utils
import mailbox
import random
import sys
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from pathlib import Path

from pbmserv.games import get_game

SERVER = "pbmserv@localhost"


def mail(sender: str, subject: str, body: str, date: datetime, number: int, **headers: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = f"{sender.split('@')[0].title()} <{sender}>"
    message["To"] = SERVER
    message["Subject"] = subject
    message["Date"] = email.utils.format_datetime(date)
    message["Message-ID"] = f"<game-{number}@example.org>"
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    message.set_content(body)
    return message


def game_mails(game_name: str = "superwari", seed: int = 1, players=("alice", "bob"),
               params: str = "") -> list[EmailMessage]:
    """Sign-ups, a challenge and a whole game to its end, alternating the two ways of
    writing a move: a Subject command, and a reply whose body holds the command."""
    game = get_game(game_name)
    rng = random.Random(seed)
    clock = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
    mails: list[EmailMessage] = []

    def add(sender: str, subject: str, body: str = "", **headers: str) -> None:
        nonlocal clock
        clock += timedelta(minutes=rng.randint(5, 600))
        mails.append(mail(f"{sender}@example.org", subject, body, clock, len(mails) + 1, **headers))

    for userid in players:
        add(userid, f"signup {userid} {userid}-secret")
    add(players[0], f"{game.name} challenge {players[0]} {players[0]}-secret {' '.join(players[1:])} {params}".strip(),
        "Good luck!\n")
    param_values = {p.name: p.default for p in game.params}
    for word in params.split():
        name, _, value = word[1:].partition("=")
        param_values[name] = int(value)
    state = game.setup(len(players), param_values, None)
    number = 0
    while game.result(state) is None:
        seat = min(game.to_act(state))
        move = rng.choice(game.legal_moves(state, seat))
        number += 1
        userid = players[seat]
        command = f"{game.name} move 101 {userid} {userid}-secret {move} #{number}"
        if number % 2:
            add(userid, command)
        else:
            add(userid, f"Re: {game.title} Board 101 {userid}",
                f"{command}\n\nYour turn.\n\n-- \n{userid}\n\nOn some day pbmserv wrote:\n> Summary of {game.title} Board 101\n")
        game.apply(state, seat, move, None)
    add(players[0], f"{game.name} show 101")
    return mails


def write_mbox(path: str | Path, mails: list[EmailMessage]) -> Path:
    box = mailbox.mbox(str(path))
    for message in mails:
        box.add(message)
    box.flush()
    box.close()
    return Path(path)


if __name__ == "__main__":
    write_mbox(sys.argv[1], game_mails())

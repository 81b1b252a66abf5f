"""`pbmserv replay` of a generated mbox of many interleaved boards of every game, against
merely parsing the same messages with the standard library's `email` package.

    .venv/bin/python bench/run.py replay            # 10,000 mails
    .venv/bin/python bench/run.py --quick replay    # ~300 mails
    .venv/bin/python bench/bench_replay.py [MAILS] [OUT.mbox]   # just write the mbox

The mbox holds, for each board, the sign-ups of its own players (p17a, p17b, ...), the
challenge and a whole game of random legal moves (a seeded RNG, as tests/mailgen.py
plays them), every board of every game interleaved in Date order. Survive deals hidden
hands from the server's seed, so its boards are played, as tests/test_replay.py plays
them, by their deadlines: a challenge with -deadline=1d and a `show` weeks later.
Replay runs in-process (`pbmserv.cli.main`), so no interpreter start-up is counted.
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import email.utils
import io
import mailbox
import random
import re
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from pathlib import Path

import common
from common import Result

from pbmserv.cli import main as pbmserv_main
from pbmserv.games import get_game

SERVER = "pbmserv@localhost"
START = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
# (game, challenge parameters, players): every game, cycled board by board
KINDS = [("superwari", "", 2), ("wari", "", 2), ("survival", "", 2), ("serpent", "-size=4", 2),
         ("serpent", "-size=5", 2), ("survive", "-deadline=1d", 3)]
STAGGER = timedelta(minutes=47)  # between the starts of two consecutive boards
SURVIVE_SHOW_AFTER = timedelta(days=40)
PARSE_REPEAT = 3
ERRORS_ALLOWED = 5  # error replies tolerated before the run counts as meaningless


@dataclass
class Dated:
    date: datetime
    order: int  # ties of Date keep generation order
    raw: bytes


def make_mail(sender: str, subject: str, body: str, date: datetime, message_id: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = f"{sender.title()} <{sender}@example.org>"
    message["To"] = SERVER
    message["Subject"] = subject
    message["Date"] = email.utils.format_datetime(date)
    message["Message-ID"] = f"<{message_id}@example.org>"
    message.set_content(body)
    return message


def board_mails(index: int, game_name: str, params: str, players: int, board: int,
                start: datetime) -> list[tuple[datetime, EmailMessage]]:
    """Sign-ups, the challenge and the whole game of the `index`-th board, which the
    server will number `board` (boards count per game type from 101, in challenge order)."""
    game = get_game(game_name)
    rng = random.Random(index)
    userids = [f"p{index}{chr(ord('a') + seat)}" for seat in range(players)]
    out: list[tuple[datetime, EmailMessage]] = []

    def add(userid: str, subject: str, body: str, date: datetime) -> None:
        out.append((date, make_mail(userid, subject, body, date, f"b{index}-{len(out) + 1}")))

    # fixed offsets, so challenges come in board order and the board numbers are known
    for seat, userid in enumerate(userids):
        add(userid, f"signup {userid} {userid}-secret", "", start + timedelta(minutes=seat + 1))
    clock = start + timedelta(minutes=players + 1)
    add(userids[0], f"{game.name} challenge {userids[0]} {userids[0]}-secret {' '.join(userids[1:])} "
                    f"{params}".strip(), "Good luck!\n", clock)
    if game.has_chance:  # Survive: played by its deadlines, then shown
        add(userids[1], f"{game.name} show {board}", "", clock + SURVIVE_SHOW_AFTER)
        return out
    values = {p.name: p.default for p in game.params}
    for word in params.split():
        name, _, value = word[1:].partition("=")
        values[name] = int(value)
    state = game.setup(players, values, None)
    number = 0
    while game.result(state) is None:
        seat = min(game.to_act(state))
        move = rng.choice(game.legal_moves(state, seat))
        number += 1
        userid = userids[seat]
        clock += timedelta(minutes=rng.randint(5, 600), seconds=rng.randint(0, 59))
        command = f"{game.name} move {board} {userid} {userid}-secret {move} #{number}"
        if number % 2:
            add(userid, command, "", clock)
        else:  # a reply to the board mail, the command in its body
            add(userid, f"Re: {game.title} Board {board} {userid}", f"{command}\n\nYour turn.\n\n-- \n{userid}\n\n"
                f"On some day pbmserv wrote:\n> Summary of {game.title} Board {board}\n", clock)
        game.apply(state, seat, move, None)
    clock += timedelta(minutes=rng.randint(5, 600))
    add(userids[0], f"{game.name} show {board}", "", clock)
    return out


def generate(target: int) -> tuple[list[bytes], int]:
    """Whole boards, cycling through every game, until at least `target` mails; the
    raw mails in Date order, and the number of boards. (Bytes, not message objects:
    ten thousand of those would weigh on the garbage collector of the timed replay.)"""
    dated: list[Dated] = []
    boards: dict[str, int] = {}
    index = 0
    while len(dated) < target:
        game_name, params, players = KINDS[index % len(KINDS)]
        board = boards.get(game_name, 100) + 1
        boards[game_name] = board
        for date, message in board_mails(index, game_name, params, players, board, START + index * STAGGER):
            dated.append(Dated(date, len(dated), message.as_bytes()))
        index += 1
    dated.sort(key=lambda d: (d.date, d.order))
    return [d.raw for d in dated], index


def write_mbox(path: Path, mails: list[bytes]) -> Path:
    box = mailbox.mbox(str(path))
    box.lock()
    try:
        for message in mails:
            box.add(message)
        box.flush()
    finally:
        box.unlock()
        box.close()
    return path


def read_raw(path: Path) -> list[bytes]:
    box = mailbox.mbox(str(path), create=False)
    try:
        return [box.get_bytes(key) for key in box.keys()]
    finally:
        box.close()


def outbox_subjects(outbox: Path) -> list[str]:
    parser = BytesHeaderParser(policy=email.policy.default)
    return [str(parser.parsebytes(file.read_bytes())["Subject"]) for file in (outbox / "new").iterdir()]


def replay_once(box: Path, outbox: Path, count: int) -> tuple[float, int, list[str]]:
    """Seconds of one `pbmserv replay`, replies written, their error subjects."""
    printed = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(printed):
        code = pbmserv_main(["replay", str(box), "--outbox", str(outbox)])
    seconds = time.perf_counter() - start
    text = printed.getvalue()
    summary = f"Replayed {count} mails: {count} answered, 0 ignored (loop rules), 0 duplicates, 0 failed."
    if code != 0 or summary not in text:
        raise RuntimeError(f"pbmserv replay did not answer every mail (exit {code}):\n{text}")
    subjects = outbox_subjects(outbox)
    errors = [s for s in subjects if re.search(r"error", s, re.IGNORECASE)]
    if len(errors) > ERRORS_ALLOWED:
        raise RuntimeError(f"{len(errors)} of {len(subjects)} replies are errors, e.g. {errors[:5]}: "
                           "the generated moves do not fit the server's boards")
    return seconds, len(subjects), errors


def parse_all(raws: list[bytes]) -> None:
    for raw in raws:
        email.message_from_bytes(raw, policy=email.policy.default)


def run(quick: bool) -> list[Result]:
    target = 300 if quick else 10_000
    mails, boards = generate(target)
    scratch = common.scratch("bench-replay-")  # removed at the end: see `common.scratch`
    box = write_mbox(scratch / "bench.mbox", mails)
    del mails
    raws = read_raw(box)  # once, outside the timing
    count = len(raws)
    parse = common.median_seconds(lambda: parse_all(raws), PARSE_REPEAT)
    # one replay: at full size it takes minutes, long enough to be steady
    replay, replies, errors = replay_once(box, scratch / "outbox", count)
    games = ", ".join(dict.fromkeys(f"{name} {params}".strip() for name, params, _ in KINDS))
    note = (f"{count} mails, {boards} boards of {games}; {count / replay:,.0f} mails/s replayed in-process, "
            f"{replies} replies, {len(errors)} errors; parsing median of {PARSE_REPEAT}")
    return [Result("replay: pbmserv replay vs email.message_from_bytes", replay, parse, "s",
                   goal="ratio <= 5", met=replay / parse <= 5, note=note)]


if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    target_path = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("bench-replay.mbox")
    generated, board_count = generate(size)
    write_mbox(target_path, generated)
    print(f"{len(generated)} mails of {board_count} boards written to {target_path}")

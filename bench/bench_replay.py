"""`pbmserv replay` of a generated mbox of many interleaved boards of every game, against
merely parsing the same messages with the standard library's `email` package; and the
part of that replay spent writing the replies' words (`timing_writers`), against the
same parsing.

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
import importlib
import io
import mailbox
import pkgutil
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

import pbmserv
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


# what writes the replies' words: the worker's board mails (their text boards) and the
# sender's drafts made into mails (the HTML boards, the MIME parts and their encoding)
REPLY_WRITERS = [("pbmserv.play", "board_mails"), ("pbmserv.mail.outbound", "render_draft")]


@contextlib.contextmanager
def timing_writers(spent: list[float]):
    """Add to `spent[0]` the seconds replay spends in REPLY_WRITERS (the outermost call
    only): the part of replay that no storage design removes. Each function is
    replaced wherever a module of pbmserv holds it, since its callers import it by
    name, so every module is imported first; two clock reads a call cost about a
    microsecond."""
    for module in pkgutil.walk_packages(pbmserv.__path__, "pbmserv."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    depth = [0]

    def timed(function):
        def call(*args, **kwargs):
            depth[0] += 1
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                depth[0] -= 1
                if not depth[0]:
                    spent[0] += time.perf_counter() - start
        return call

    replaced = []
    for module_name, name in REPLY_WRITERS:
        original = getattr(importlib.import_module(module_name), name)
        wrapper = timed(original)
        for module in [m for n, m in sys.modules.items() if n.startswith("pbmserv") and m is not None]:
            if getattr(module, name, None) is original:
                setattr(module, name, wrapper)
                replaced.append((module, name, original))
    try:
        yield
    finally:
        for module, name, original in replaced:
            setattr(module, name, original)


def replay_once(box: Path, outbox: Path, count: int) -> tuple[float, float, int, list[str]]:
    """Seconds of one `pbmserv replay`, the seconds of it spent writing the replies'
    words (`timing_writers`), replies written, their error subjects."""
    printed = io.StringIO()
    writing = [0.0]
    start = time.perf_counter()
    with contextlib.redirect_stdout(printed), timing_writers(writing):
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
    return seconds, writing[0], len(subjects), errors


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
    replay, writing, replies, errors = replay_once(box, scratch / "outbox", count)
    games = ", ".join(dict.fromkeys(f"{name} {params}".strip() for name, params, _ in KINDS))
    note = (f"{count} mails, {boards} boards of {games}; {count / replay:,.0f} mails/s replayed in-process, "
            f"{replies} replies, {len(errors)} errors; parsing median of {PARSE_REPEAT}")
    return [Result("replay: pbmserv replay vs email.message_from_bytes", replay, parse, "s",
                   goal="ratio <= 5", met=replay / parse <= 5, note=note),
            Result("replay: writing the replies' words (part of replay) vs parsing", writing, parse, "s",
                   note=f"board_mails and render_draft in the replay above: {writing / replay:.0%} of it, "
                        f"{writing / replies * 1e6:,.0f} us a reply")]


if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    target_path = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("bench-replay.mbox")
    generated, board_count = generate(size)
    write_mbox(target_path, generated)
    print(f"{len(generated)} mails of {board_count} boards written to {target_path}")

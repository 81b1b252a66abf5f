"""No line of any mail the server writes is longer than 78 characters (WIDTH), but
the player's own lines it quotes: the lines starting with "> " after "Your message:"
in an error, and the "> line" echo of each command in a `pbmserv results` mail.

A scenario plays everything a kind of user may send -- every command of a game, or
every account and admin command -- with the longest plausible values (20-character
userids, 64-character passwords, long addresses and comments, errors of every kind,
deadlines passing), section by section. The memory transport keeps every mail the
server sent; each test reads every line of the mails of one section. A scenario runs
once per game (and backend) and its mails are kept for the tests of its sections.

Templates and commands wrap their own prose (`fill`, `wrap_items`); the outbound queue
fills whatever line is still too long (`render.fill`), quoted lines excepted.
"""

from __future__ import annotations

import email
import email.header
import email.policy
import random
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from test_survive import random_move

from pbmserv.games import get_game
from pbmserv.mail.text import WIDTH, wrap_items
from pbmserv.play import current_state, names
from pbmserv.render import environment, fill
from pbmserv.store.repo import find_game

# 20 characters each, the longest a userid may be
PLAYERS = ["maximilian_longname1", "bartholomew.overlong", "cassandra-of-troy-22", "desdemona_wellington",
           "evangeline.fairweath", "fitzgerald_montague7", "guinevere-pendragon7"]
WATCHER = "hieronymus_bosch_fan"
OUTSIDER = "ignatius_outsider_99"
ADMIN = "administrator_of_pbm"
NOBODY = "nobody_by_this_name1"
SECOND = "cassandra_2nd_acct_x"
DOMAIN = "mail.a-rather-long-domain-name.example.org"
GAMES = ["superwari", "serpent", "survival", "survive"]


def address(userid: str) -> str:
    return f"{userid}@{DOMAIN}"


def password(userid: str) -> str:
    return f"{userid}-has-a-very-long-and-secret-passphrase-of-64-characters"[:64]


WRONG = "a-wrong-password-that-is-long-as-well"
NOT_A_MOVE = "this-is-not-a-move-in-any-game-at-all-ever"
COMMENT = ("This comment is one long line that a player wrote without ever pressing return, so that it "
           "runs on for well over two hundred characters, which the server must wrap before it relays "
           "it to the other players of the board.\n"
           "A short line.\n"
           "    an indented line, kept as it is")


# --- reading the mails -----------------------------------------------------------------------------


def overlong(subject: str, text: str) -> list[str]:
    """The lines of a mail's text longer than WIDTH that are not the player's own quoted."""
    found = []
    quoting = False  # after "Your message:", the "> " lines are the player's
    echoes = subject == "pbmserv results"  # each "> line" after a blank line echoes a command
    previous = ""
    for line in text.split("\n"):
        if line == "Your message:":
            quoting = True
        elif len(line) > WIDTH and not (line.startswith("> ") and (quoting or (echoes and previous == ""))):
            found.append(line)
        previous = line
    return found


def plain_text(raw: bytes) -> tuple[str, str]:
    """A mail's Subject and its text (the text/plain part of a board mail). Read with
    the compat32 policy: the default one takes longer than the server to write it."""
    message = email.message_from_bytes(raw)
    part = next(part for part in message.walk() if part.get_content_type() == "text/plain")
    text = part.get_payload(decode=True).decode(part.get_content_charset() or "ascii").replace("\r\n", "\n")
    return str(email.header.make_header(email.header.decode_header(message["Subject"]))), text


def assert_all_fit(mails: list[tuple[str, str]]) -> None:
    """Every mail fits WIDTH; else each offending line once, with the subject of the
    first mail that had it and how many had it."""
    assert mails, "the section sent no mail"
    offenders: dict[str, list[str]] = {}
    for subject, text in mails:
        for line in overlong(subject, text):
            offenders.setdefault(line, []).append(subject)
    if not offenders:
        return
    report = "\n".join(
        f"{len(line)} chars in {subjects[0]!r}" + (f" (and {len(subjects) - 1} more mails)" if subjects[1:] else "")
        + f":\n    {line}" for line, subjects in offenders.items())
    report = f"{len(offenders)} lines longer than {WIDTH} in {len(mails)} mails:\n{report}"
    pytest.fail(report, pytrace=False)


# --- sending ---------------------------------------------------------------------------------------


class Players:
    """A server, mails sent to it as its users (by userid), and the mails it sent,
    by section."""

    def __init__(self, server):
        self.server = server
        self.sections: dict[str, list[tuple[str, str]]] = {}

    @contextmanager
    def section(self, name: str) -> Iterator[None]:
        before = len(self.server.transport.delivered)
        yield
        self.sections[name] = [plain_text(raw) for _to, raw in self.server.transport.delivered[before:]]

    def signup(self, *userids: str) -> None:
        for userid in userids:
            self.server.send(address(userid), f"signup {userid} {password(userid)}")

    def send(self, userid: str, subject: str, body: str = "", **kwargs) -> list:
        return self.server.send(address(userid), subject, body, **kwargs)

    def each(self, userid: str, *subjects: str) -> None:
        for subject in subjects:
            self.send(userid, subject)

    def last_mail(self, to: str, subject: str = "") -> email.message.EmailMessage:
        """The last mail sent to the address `to` (whose Subject starts with `subject`)."""
        for recipients, raw in reversed(self.server.transport.delivered):
            message = email.message_from_bytes(raw, policy=email.policy.default)
            if to in recipients and str(message["Subject"]).startswith(subject):
                return message
        raise AssertionError(f"no mail {subject!r} to {to}")

    def challenge(self, game_name: str, seated: list[str], params: str = "", comment: str = "") -> int:
        """Start a board; its number."""
        first = seated[0]
        replies = self.send(first, f"{game_name} challenge {first} {password(first)} {' '.join(seated[1:])} {params}",
                            comment)
        return int(re.search(r"^New .* Board (\d+)", replies[0].subject)[1])

    def position(self, game_name: str, board: int):
        """(status, userids, state) of a board."""
        with self.server.sessions() as session:
            record = find_game(session, game_name, board)
            return record.status, names(record), current_state(record)


def new_server(make_server, **limits):
    return make_server(server={"admins": [ADMIN]},
                       limits={"errors_per_day": 100_000, "messages_per_day": 1000, "broadcasts_per_day": 100,
                               **limits})


# --- the games -------------------------------------------------------------------------------------


CLOCKS = "-nagtime=1d -forfeittime=3d"
BIG = {"superwari": f"-pits=10 -stones=6 {CLOCKS}", "serpent": f"-size=6 {CLOCKS}", "survival": CLOCKS,
       "survive": f"-deadline=2d -window=1d -first={PLAYERS[2]}"}
SMALL = {"superwari": "-pits=4 -stones=1", "serpent": "-size=4", "survival": "", "survive": "-deadline=1h -window=10m"}
BAD_PARAMS = {"superwari": ["-pits=99", "-stones=many-many-stones-indeed", "-pitsize=3"],
              "serpent": ["-size=1000000", "-size=x"],
              "survival": ["-size=4"],
              "survive": ["-deadline=3y", "-window=1m", f"-first={NOBODY}", "-deadline=99999d"]}
SEATS = {"superwari": 2, "serpent": 2, "survival": 2, "survive": 7}
SMALL_SEATS = {"superwari": 2, "serpent": 2, "survival": 2, "survive": 3}
MOVES = {"superwari": 200, "serpent": 20, "survival": 200, "survive": 15}  # on the board played out, at most


def a_move(players: Players, game_name: str, board: int, rng: random.Random) -> tuple[str, str] | None:
    """(userid, move) of a player who may act on the board, or None once it is over."""
    status, userids, state = players.position(game_name, board)
    game = get_game(game_name)
    if status != "active" or game.result(state) is not None:
        return None
    acting = sorted(game.to_act(state))
    seat = rng.choice(acting)
    if game_name == "survive":
        move = re.sub(r"\{seat(\d)\}", lambda m: userids[int(m[1])], random_move(state, seat, rng))
    else:
        move = rng.choice(game.legal_moves(state, seat) or ["a1"])
    return userids[seat], move


def idle(players: Players, game_name: str, board: int) -> list[str]:
    """The players of a board who have nothing to do now."""
    _status, userids, state = players.position(game_name, board)
    acting = get_game(game_name).to_act(state)
    return [userid for seat, userid in enumerate(userids) if seat not in acting]


def play(players: Players, game_name: str, board: int, rng: random.Random, moves: int) -> None:
    for number in range(moves):
        found = a_move(players, game_name, board, rng)
        if found is None:
            return
        userid, move = found
        players.send(userid, f"{game_name} move {board} {userid} {password(userid)} {move}",
                     COMMENT if number % 10 == 0 else "")


GAME_COMMANDS = ["help", "challenge", "move", "show", "showas", "resign", "games", "decline", "refuse", "welcome",
                 "limit", "subscribe", "unsubscribe", "chat", "queue", "preview", "submit", "confirm", "history",
                 "standings", "rematch", "seek", "seeks", "join", "start", "unseek", "match"]


def game_scenario(players: Players, g: str) -> None:
    """Every command of game `g`, section by section."""
    server = players.server
    seated = PLAYERS[:SEATS[g]]
    a, b = seated[0], seated[1]
    pa, pb = password(a), password(b)
    opponents = " ".join(seated[1:])
    small = PLAYERS[:SMALL_SEATS[g]]  # the other boards
    rng = random.Random(7)
    players.signup(*PLAYERS, WATCHER, OUTSIDER)

    with players.section("help"):
        players.each(a, f"{g} help", f"help {g}", *(f"help {g} {cmd}" for cmd in ["move", "queue", "preview"]))
        players.send(a, "Commands", "\n".join(f"help {g} {cmd}" for cmd in GAME_COMMANDS))

    with players.section("challenge"):
        players.each(a, f"{g} challenge {a}",
                     f"{g} challenge {a} {pa} {NOBODY}",
                     f"{g} challenge {a} {WRONG} {b}",
                     f"{g} challenge {a} {pa} {a}",
                     f"{g} challenge {a} {pa} {b} {b}",
                     f"{g} challenge {a} {pa} {' '.join(PLAYERS[1:])} {WATCHER}",
                     f"{g} challenge {a} {pa} {b} -no-such-parameter-with-a-long-name=value",
                     f"{g} challenge {a} {pa} {b} -nagtime=30d -forfeittime=2d",
                     f"{g} challenge {a} {pa} {b} -nagtime=tomorrow-or-the-day-after",
                     *(f"{g} challenge {a} {pa} {opponents} {bad}" for bad in BAD_PARAMS[g]))
        players.send(a, f"{g} challenge {a} {pa} {opponents} {BIG[g]}", COMMENT)

    with players.section("refuse"):
        players.each(b, f"{g} refuse {b} {pb}", f"{g} refuse {b} {pb}")
        players.send(a, f"{g} challenge {a} {pa} {opponents}")
        players.each(b, f"{g} welcome {b} {pb}", f"{g} welcome {b} {pb}", f"{g} limit {b} {pb} 0",
                     f"{g} limit {b} {pb} 123456", f"{g} limit {b} {pb} unlimited-please", f"{g} limit {b} {pb} none",
                     f"{g} limit {b} {pb} 1", f"{g} limit {b} {pb} 1")
        players.send(a, f"{g} challenge {a} {pa} {opponents}")  # over b's limit
        players.send(b, f"{g} limit {b} {pb} none")

    with players.section("show"):
        players.each(WATCHER, f"{g} show 101", f"{g} show 101 legal", f"{g} show 101#0", f"{g} show 101#99",
                     f"{g} show 101 all of it", f"{g} show board-one-hundred-and-one", f"{g} show 999999999",
                     f"{g} show 1234567890123", f"{g} games", f"{g} games {a}", f"{g} games {NOBODY}",
                     f"{g} showas 101 {WATCHER} {password(WATCHER)}")
        players.each(a, f"{g} showas 101 {a} {pa}", f"{g} showas 101 {a} {WRONG}")
        for userid in seated:
            players.send(userid, f"{g} showas 101 {userid} {password(userid)}")

    userid, move = a_move(players, g, 101, rng)
    with players.section("move"):
        players.send(OUTSIDER, f"{g} move 101 {OUTSIDER} {password(OUTSIDER)} {move}")
        for other in idle(players, g, 101):
            players.send(other, f"{g} move 101 {other} {password(other)} {move}")
        players.each(userid,
                     f"{g} move 101 {userid} {password(userid)} {NOT_A_MOVE}",
                     f"{g} move 101 {userid} {password(userid)} zz99",
                     f"{g} move 101 {userid} {password(userid)} {move} #12345",
                     f"{g} move 101 {userid} {password(userid)} #1",
                     f"{g} move 999 {userid} {password(userid)} {move}",
                     f"{g} move 101 {userid}",
                     f"{g} move 101 {userid} {WRONG} {move}",
                     f"{g} mvoe 101 {userid} {password(userid)} {move}")

    with players.section("pending"):
        other = next(p for p in seated if p != userid)
        players.each(other, f"{g} queue 101 {other} {password(other)} cancel",
                     f"{g} queue 101 {other} {password(other)} some-move-that-is-never-legal")
        players.each(userid, f"{g} queue 101 {userid} {password(userid)} {move}",
                     f"{g} queue 101 {userid} {password(userid)} cancel",
                     f"{g} preview 101 {userid} {password(userid)} {move}",
                     f"{g} preview 101 {userid} {password(userid)} {move}; {NOT_A_MOVE}",
                     f"{g} preview 101 {userid} {password(userid)} ; ;",
                     f"{g} submit 101 {userid} {password(userid)} {NOT_A_MOVE}",
                     f"{g} confirm 101 {userid} {password(userid)}",
                     f"{g} submit 101 {userid} {password(userid)} {move}")
        players.send(userid, f"{g} confirm 101 {userid} {password(userid)}", COMMENT)

    with players.section("watch"):
        players.each(WATCHER, f"{g} unsubscribe 101 {WATCHER} {password(WATCHER)}",
                     f"{g} subscribe 101 {WATCHER} {password(WATCHER)}",
                     f"{g} subscribe 101 {WATCHER} {password(WATCHER)}")
        players.send(a, f"{g} subscribe 101 {a} {pa}")
        players.send(WATCHER, f"{g} chat 101 {WATCHER} {password(WATCHER)}", COMMENT)
        players.send(WATCHER, f"{g} chat 101 {WATCHER} {password(WATCHER)}")
        players.send(OUTSIDER, f"{g} chat 101 {OUTSIDER} {password(OUTSIDER)}", COMMENT)
        players.send(a, f"{g} chat 101 {a} {pa}", COMMENT)

    with players.section("votes"):  # on a board of their own: a draw would end board 101
        board = players.challenge(g, small)
        play(players, g, board, rng, 2)
        for word in ["propose", "undo", "accept", "reject", "propose", "propose", "accept", "undo", "reject"]:
            for userid in small[:2]:
                players.send(userid, f"{g} move {board} {userid} {password(userid)} {word}", COMMENT)
        for userid in small:
            players.send(userid, f"{g} resign {board} {userid} {password(userid)}")

    with players.section("reply"):
        found = a_move(players, g, 101, rng)
        if found is not None:
            userid, move = found
            reply_to = str(players.last_mail(address(userid), f"{get_game(g).title} Board 101")["Reply-To"])
            for subject, body in [("Re: board", NOT_A_MOVE), ("Re: board", ""), (move, COMMENT)]:
                players.send(userid, subject, body, headers={"To": reply_to})
            players.send(OUTSIDER, move, headers={"To": reply_to})

    with players.section("results"):
        players.send(a, "Commands", "\n".join([
            f"{g} show 101", f"{g} move 101 {a} {pa} {NOT_A_MOVE}", f"{g} games", f"help {g} move",
            f"{g} challenge {a} {pa} {NOBODY}", f"{g} history", f"{g} standings", f"{g} move 101",
            f"{g} frobnicate 101 {a} {pa}", f"{g} show 101 legal", f"{g} showas 101 {a} {pa}"]))

    with players.section("vacation"):
        for userid in seated:
            players.send(userid, f"vacation {userid} {password(userid)} 2")
        players.send(WATCHER, f"{g} show 101")
        for userid in seated:
            players.send(userid, f"vacation {userid} {password(userid)} off")

    with players.section("play"):
        board = players.challenge(g, small, SMALL[g], COMMENT)
        play(players, g, board, rng, MOVES[g])
        for userid in small:
            players.send(userid, f"{g} resign {board} {userid} {password(userid)}", COMMENT)

    with players.section("finished"):
        players.each(a, f"{g} move {board} {a} {pa} anything", f"{g} resign {board} {a} {pa}",
                     f"{g} decline {board} {a} {pa}", f"{g} history", f"{g} history {a}", f"{g} history {NOBODY}",
                     f"{g} standings", f"{g} show {board}", f"{g} show {board} legal", f"{g} show {board}#1",
                     f"{g} rematch {board} {a} {pa}")
        players.send(WATCHER, f"{g} subscribe {board} {WATCHER} {password(WATCHER)}")

    with players.section("decline"):
        board = players.challenge(g, small)
        players.send(a, f"{g} decline {board} {a} {pa}")
        players.send(b, f"{g} decline {board} {b} {pb}", COMMENT)
        players.send(b, f"{g} decline {board} {b} {pb}")

    with players.section("seeks"):  # seeks 1 to 3 of this server; seek 3 expires in "deadlines"
        seats, few = SEATS[g], SMALL_SEATS[g]
        c, d = PLAYERS[2], PLAYERS[4]
        players.each(a, f"{g} seeks", f"{g} seek {a} {pa} {seats} {BIG[g].replace(PLAYERS[2], a)}",
                     f"{g} seek {a} {pa} {few} {SMALL[g]}", f"{g} seek {a} {pa}", f"{g} seek {a} {pa}",
                     f"{g} seek {a} {pa} 99999999999999999999999", f"{g} seek {a} {pa} {seats + 1}",
                     f"{g} seek {a} {pa} {b}", f"{g} seek {a} {pa} {seats} {BAD_PARAMS[g][0]}",
                     f"{g} seek {a} {pa} -first={NOBODY}", f"{g} seek {a} {WRONG}",
                     f"{g} join 1 {a} {pa}", f"{g} start 1 {a} {pa} {b}", f"{g} start 1 {a} {pa} {NOBODY}",
                     f"{g} start 1 {a} {pa} robot1 robot2 robot3 robot1 robot2 robot3 robot1",
                     f"{g} join 123456789012 {a} {pa}", f"{g} join {NOT_A_MOVE} {a} {pa}",
                     f"{g} unseek 999999999 {a} {pa}")
        players.send(WATCHER, f"{g} join 1 robot1 {WRONG}")
        players.send(OUTSIDER, f"{g} seeks")
        players.each(c, f"{g} refuse {c} {password(c)}", f"{g} join 3 {c} {password(c)}",
                     f"{g} welcome {c} {password(c)}", f"{g} unseek 1 {c} {password(c)}",
                     f"{g} start 1 {c} {password(c)}")
        players.send(b, f"{g} join 1 {b} {pb}", COMMENT)  # a two-player game starts
        players.each(b, f"{g} join 1 {b} {pb}", f"{g} start 1 {b} {pb}", f"{g} unseek 3 {b} {pb}")
        if seats > 2:
            for userid in PLAYERS[2:5]:
                players.send(userid, f"{g} join 1 {userid} {password(userid)}")
            players.send(c, f"{g} unseek 1 {c} {password(c)}")
            players.send(d, f"{g} refuse {d} {password(d)}")
            players.send(a, f"{g} start 1 {a} {pa}")  # d refuses now
            players.send(d, f"{g} welcome {d} {password(d)}")
            players.send(OUTSIDER, f"{g} seeks")
            players.send(a, f"{g} start 1 {a} {pa} robot1 robot2 robot3", COMMENT)
            players.send(b, f"{g} join 2 {b} {pb}")
            players.send(a, f"{g} unseek 2 {a} {pa}")
        else:
            players.send(a, f"{g} start 2 {a} {pa} robot3", COMMENT)

    with players.section("robots"):
        robots = " ".join(f"robot{1 + n % 3}" for n in range(SMALL_SEATS[g]))
        players.each(a, f"{g} match {a} {pa} {b} robot1", f"{g} match {a} {pa} robot1 robot1",
                     f"{g} match {a} {WRONG} {robots}", f"{g} resign 101 robot2 {WRONG}")
        players.send(WATCHER, f"{g} match {WATCHER} {password(WATCHER)} {robots}")  # played through at once

    with players.section("deadlines"):  # board 101: reminders and forfeits, or the game's own deadlines
        for _ in range(10):
            server.wait(timedelta(days=1))


def account_scenario(players: Players) -> None:
    """Every account and admin command, section by section."""
    server = players.server
    a, b, c = PLAYERS[:3]
    pa, pb = password(a), password(b)
    extra = [f"{a}.number{n}@{DOMAIN}" for n in range(1, 6)]

    with players.section("signup"):
        for subject in [f"signup {'x' * 30} {pa}", "signup all secret-password", f"signup {ADMIN} {pa}",
                        f"signup {a} abc", f"signup {a} {'p' * 70}", f"signup {a} {pa} not-an-address-at-all",
                        f"signup {a} {pa} {' '.join(extra)} {address(a)}", f"signup {a}"]:
            players.send(a, subject)
        players.signup(*PLAYERS, WATCHER)
        players.send(a, f"signup {a.upper()} {pa}")
        players.send(SECOND, f"signup {SECOND} {password(SECOND)} {address(SECOND)} {SECOND}.other@{DOMAIN}")
        server.add_user(ADMIN, password(ADMIN), address(ADMIN))

    with players.section("confirm"):
        other = f"{SECOND}.other@{DOMAIN}"
        mail = players.last_mail(other, "pbmserv confirm")
        token = re.search(rf"confirm {re.escape(SECOND)} (\w+)", mail.get_content())[1]
        players.each(SECOND, f"confirm {SECOND} 0123456789abcdef", f"confirm {NOBODY} {token}")
        for _ in range(2):
            server.send(other, "Re: pbmserv confirm", headers={"To": str(mail["Reply-To"])})
        server.send(other, "Re: x", headers={"To": "pbmserv+zz-bad-tag-of-some-length@localhost"})
        players.send(SECOND, f"change address {SECOND} {password(SECOND)} {address(SECOND)} {other}.again")

    with players.section("help"):
        topics = ["", "reply", "robots", "help", "signup", "change", "change password", "change address", "confirm", "list",
                  "message", "broadcast", "forgot", "reset", "signoff", "all games", "abort", "disable", "enable",
                  "vacation", "GAME move", "move", "game standings", "no-such-topic-with-a-long-name",
                  "superwari", "serpent", "survival", "survive", "wari"]
        players.each(a, *(f"help {topic}".strip() for topic in topics))
        players.send(a, "list")

    with players.section("password"):
        players.each(a, f"change password {a} {WRONG} {pa[::-1]}", f"change password {a} {pa} abc",
                     f"change password {a} {pa} {pa}-and-more", f"change password {a} {pa} {pa[::-1]}",
                     f"change password {a} {pa[::-1]} {pa}")
        players.send(b, f"forgot {b}")
        token = re.search(rf"reset {re.escape(b)} (\w+)",
                          players.last_mail(address(b), "pbmserv reset").get_content())[1]
        players.each(b, f"forgot {NOBODY}", f"reset {b} 0123456789abcdef new-{pb}", f"reset {NOBODY} {token} x",
                     f"reset {b} {token} abc", f"reset {b} {token} {pb}")

    with players.section("address"):
        players.each(c, f"change address {c} {password(c)} not-an-address",
                     f"change address {c} {password(c)} {' '.join(extra)} {address(c)}",
                     f"change address {c} {password(c)} {address(c)} {extra[0]} {extra[1]}",
                     f"change address {c} {password(c)} {address(c)} {extra[0]}",
                     f"change address {c} {password(c)} {address(c)} {extra[0]}",
                     f"change address {c} {password(c)} {address(c)}")

    with players.section("message"):
        players.send(a, f"message {a} {pa} {' '.join(PLAYERS[1:])} {WATCHER}", COMMENT)
        players.send(a, f"message {a} {pa} {b} {NOBODY}", COMMENT)
        players.send(a, f"message {a} {pa} {b}")
        players.send(a, f"message {a} {pa} {' '.join(f'{p}{n}' for p in PLAYERS for n in range(2))}", COMMENT)
        players.send(a, f"message {a} {WRONG} {b}", COMMENT)
        players.send(b, "Messages", f"message {b} {pb} {a} {c}\n{COMMENT}")

    with players.section("broadcast"):
        players.send(a, f"superwari challenge {a} {pa} {b}")
        players.send(a, f"broadcast {a} {pa} superwari", COMMENT)
        players.send(c, f"broadcast {c} {password(c)} superwari", COMMENT)
        players.send(a, f"broadcast {a} {pa} no-such-game-here", COMMENT)
        players.send(a, f"broadcast {a} {pa}", COMMENT)
        players.send(a, f"broadcast {a} {pa} superwari")
        players.send(ADMIN, f"broadcast {ADMIN} {password(ADMIN)}", COMMENT)

    with players.section("all games"):
        for g in GAMES:
            players.send(a, f"{g} challenge {a} {pa} {' '.join(PLAYERS[1:SEATS[g]])}")
        players.each(b, f"all games {a}", f"all games {NOBODY}", f"all games {WATCHER}")
        players.each(b, f"set {b} {pb} listed on", f"set {b} {pb}", f"set {b} {pb} mail turn",
                     f"set {b} {pb} colour blue", f"set {b} {pb} digest 25:00", "players", "players superwari",
                     "players chess")

    with players.section("vacation"):
        players.each(b, f"vacation {b} {pb} off", f"vacation {b} {pb} someday-soon-perhaps", f"vacation {b} {pb} 0",
                     f"vacation {b} {pb} 400", f"vacation {b} {pb} 10", f"vacation {b} {pb} on",
                     f"vacation {b} {pb} off", f"vacation {b} {pb} 40")
        players.send(a, "superwari show 101")

    with players.section("lock"):
        for _ in range(6):
            players.send(WATCHER, f"vacation {WATCHER} {WRONG} on")
        server.send(f"someone.else@{DOMAIN}", f"vacation {WATCHER} {WRONG} on")
        lock = players.last_mail(address(WATCHER), "pbmserv lock")
        server.send(f"someone.else@{DOMAIN}", "Re: pbmserv lock", headers={"To": str(lock["Reply-To"])})
        players.send(WATCHER, "Re: pbmserv lock", headers={"To": str(lock["Reply-To"])})
        players.send(WATCHER, "Re: pbmserv lock", headers={"To": str(lock["Reply-To"])})

    with players.section("admin"):
        players.each(a, f"abort superwari 101 {a} {pa}", f"disable {b} {a} {pa}", f"enable {b} {a} {pa}")
        players.each(ADMIN, f"abort no-such-game 101 {ADMIN} {password(ADMIN)}",
                     f"abort superwari 999999 {ADMIN} {password(ADMIN)}",
                     f"abort superwari 101 {ADMIN} {password(ADMIN)}",
                     f"abort superwari 101 {ADMIN} {password(ADMIN)}",
                     f"disable {NOBODY} {ADMIN} {password(ADMIN)}", f"disable {ADMIN} {ADMIN} {password(ADMIN)}",
                     f"enable {b} {ADMIN} {password(ADMIN)}", f"disable {b} {ADMIN} {password(ADMIN)}",
                     f"disable {b} {ADMIN} {password(ADMIN)}")
        players.each(b, f"vacation {b} {pb} on", f"forgot {b}")
        players.send(a, f"message {a} {pa} {b}", COMMENT)
        players.send(a, f"superwari challenge {a} {pa} {b}")
        players.send(ADMIN, f"enable {b} {ADMIN} {password(ADMIN)}")
        players.each(a, f"signoff {a} {WRONG}", f"signoff {a} {pa}", f"signoff {a} {pa}")

    with players.section("errors"):
        players.send(c, "no-such-command with some words after it and a long tail of more words")
        players.send(c, "Hello", "\n".join([
            f"superwari mvoe 101 {c} {password(c)} c", f"change colour {c} {password(c)} blue",
            f"superwary move 101 {c} {password(c)} c", f"move 101 {c} {password(c)} c",
            f"serpent chalenge {c} {password(c)} {b}", "Survival is fun, and so is this long line of prose."]))
        players.each(c, f"change password {c}", f"vacation {c} {password(c)}", f"message {c} {password(c)}",
                     f"all games {c} {b}", "list everything please", "help superwari move queue")
        players.send(c, "Many", "\n".join(f"superwari show {n}" for n in range(100, 130)))
        server.send(f"a.stranger.with.a.long.name@{DOMAIN}", f"superwari move 101 {c} {WRONG} c", COMMENT)
        server.send(f"a.stranger.with.a.long.name@{DOMAIN}", "Re: board", "c",
                    headers={"To": "pbmserv+101-0-abcdefabcdefabcdef@localhost"})
        players.send(c, "Re: board", "c", headers={"To": "pbmserv+999999999-3-abcdefabcdefabcdef@localhost"})


# --- the tests -------------------------------------------------------------------------------------


GAME_SECTIONS = ["help", "challenge", "refuse", "show", "move", "pending", "watch", "votes", "reply", "results",
                 "vacation", "play", "finished", "decline", "seeks", "deadlines"]
ACCOUNT_SECTIONS = ["signup", "confirm", "help", "password", "address", "message", "broadcast", "all games",
                    "vacation", "lock", "admin", "errors"]

def cases(scenario: str, sections: list[str]) -> list:
    return [pytest.param(scenario, section, id=f"{scenario}-{section}") for section in sections]


_mails: dict[tuple[str, str], dict[str, list[tuple[str, str]]] | BaseException] = {}


def sections_of(make_server, backend: str, scenario: str) -> dict[str, list[tuple[str, str]]]:
    """The mails of each section of a scenario, played once per backend."""
    if (backend, scenario) not in _mails:
        players = Players(new_server(make_server, **({} if scenario == "account" else
                                                     {"wrong_passwords_per_hour": 1000})))
        run: Callable[[], None] = ((lambda: account_scenario(players)) if scenario == "account"
                                   else (lambda: game_scenario(players, scenario)))
        try:
            run()
            _mails[backend, scenario] = players.sections
        except BaseException as error:  # every test of the scenario reports it, none plays it again
            _mails[backend, scenario] = error
    found = _mails[backend, scenario]
    if isinstance(found, BaseException):
        raise found
    return found


@pytest.mark.parametrize("scenario, section", [case for g in GAMES for case in cases(g, GAME_SECTIONS)])
def test_every_game_mail_fits_78_columns(make_server, backend, scenario, section):
    assert_all_fit(sections_of(make_server, backend, scenario)[section])


@pytest.mark.parametrize("scenario, section", cases("account", ACCOUNT_SECTIONS))
def test_every_account_mail_fits_78_columns(make_server, backend, scenario, section):
    assert_all_fit(sections_of(make_server, backend, scenario)[section])


# --- the helpers the templates wrap with -------------------------------------------------------------


def test_fill_wraps_only_long_lines_and_keeps_quotes_and_commands_whole():
    fill = environment().globals["fill"]
    assert fill("Board numbers are whole numbers such as 101; send 'superwari games bartholomew.overlong' for "
                "the boards.\n"
                "    superwari show 101\n"
                "A new queue command replaces it; to remove it, send: superwari queue 101 bartholomew.overlong "
                "PASSWORD cancel") == (
        "Board numbers are whole numbers such as 101; send\n"
        "'superwari games bartholomew.overlong' for the boards.\n"
        "    superwari show 101\n"
        "A new queue command replaces it; to remove it, send:\n"
        "  superwari queue 101 bartholomew.overlong PASSWORD cancel")


def test_a_list_of_moves_breaks_only_between_moves():
    assert wrap_items("Legal moves for bartholomew.overlong:", ["a1", "b2 x", "c3"] * 12) == (
        "Legal moves for bartholomew.overlong: a1, b2 x, c3, a1, b2 x, c3, a1, b2 x,\n"
        "  c3, a1, b2 x, c3, a1, b2 x, c3, a1, b2 x, c3, a1, b2 x, c3, a1, b2 x, c3,\n"
        "  a1, b2 x, c3, a1, b2 x, c3, a1, b2 x, c3, a1, b2 x, c3")
    assert wrap_items("Legal moves for bob:", ["none"]) == "Legal moves for bob: none"


def test_the_outbound_queue_fills_what_is_still_too_long_but_not_quotes():
    long_quote = "> superwari move 101 bartholomew.overlong ******** c and a comment that runs on and on"
    body = ("Waiting for: bartholomew.overlong, maximilian_longname1, cornelius-the-third, dora.\n"
            "  superwari move 101 bartholomew.overlong PASSWORD MOVE\n" + long_quote)
    assert fill(body) == (
        "Waiting for: bartholomew.overlong, maximilian_longname1, cornelius-the-third,\n"
        "dora.\n"
        "  superwari move 101 bartholomew.overlong PASSWORD MOVE\n" + long_quote)

"""The `pbmserv` command line (DESIGN.md §4). Each sub-command exits 0 on success, and
otherwise prints one clear line on standard error and exits non-zero."""

from __future__ import annotations

import argparse
import email.policy
import email.utils
import gc
import getpass
import logging
import smtplib
import sys
import tempfile
import time
from email.message import EmailMessage
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

from sqlalchemy import make_url, select
from sqlalchemy.exc import ArgumentError, IntegrityError
from sqlalchemy.orm import sessionmaker

from .commands.account import check_addresses, check_password, check_userid
from .commands.base import CommandError
from .config import Config, ConfigError, load_config
from .keys import install_replay_key
from .mail.loopguard import header_address, header_text
from .mail.mailbox import MailboxError, read_mailboxes
from .mail.outbound import MaildirTransport, deliver_queued, make_transport
from .robots.turns import play_robots
from .scheduler import due_and_robots, earliest_due, keep_alive, run_due
from .passwords import hash_password
from .server import ROLES, serve, utcnow
from .store.db import DatabaseError, make_engine, migrate, open_database
from .store.models import Address, Inbound, User
from .store.repo import find_user
from .store.queue import enqueue, failed_rows, set_status
from .worker import Worker

DEFAULT_REPLAY_OUTBOX = "var/replay-outbox"
DEFAULT_REPLAY_SEED = "replay"
YOUNGEST_COLLECTED_AT = 10_000  # a replay's new objects between two young collections (Python's: 700)
REPLAY_EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)  # the clock when no mail has a Date


EX_TEMPFAIL = 75  # sysexits.h: the MTA keeps the message and tries again
SWITCH_SECONDS = 0.0005  # how soon the SMTP loop gets the interpreter back from a busy worker thread (5 ms by default)


class UsageError(Exception):
    """Bad arguments: exit 2 with one line."""


class ServeError(Exception):
    """The network is not as configured (port taken, server unreachable): exit 1."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not argparse's usage block
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


WIDTH = 78  # the longest line the admin commands print for a row


def shown_url(url: str) -> str:
    """A database URL as it may be printed or logged: without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(a URL that cannot be read)"


def printable(text: str, width: int | None = WIDTH) -> str:
    """`text` safe for a terminal (control characters written as escapes: addresses,
    Message-IDs and errors come from mail), cut to `width` characters."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if width is None or len(text) <= width else text[:width - 3] + "..."


def naive_utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        return moment
    return moment.astimezone(timezone.utc).replace(tzinfo=None)


MAILDIR_PARTS = ("new", "cur", "tmp")


def outbox_files(outbox: Path) -> list[Path]:
    """The files of the Maildir `outbox` (an absent folder has none). A folder that
    holds anything else is refused: replay empties only what a Maildir holds."""
    if not outbox.exists():
        return []
    if not outbox.is_dir():
        raise UsageError(f"pbmserv replay: the outbox {outbox} is not a folder; name a folder with --outbox")
    files: list[Path] = []
    for entry in sorted(outbox.iterdir()):
        part = entry.name in MAILDIR_PARTS and entry.is_dir() and not entry.is_symlink()
        for path in sorted(entry.iterdir()) if part else [entry]:
            if not part or path.is_symlink() or not path.is_file():
                raise UsageError(f"pbmserv replay: the outbox {outbox} holds {path.relative_to(outbox)}, which "
                                 f"is not a file of a Maildir; name an empty folder with --outbox")
            files.append(path)
    return files


def settle_collector() -> None:
    """Tune Python's cycle collector for a replay, once in a process. What is loaded
    by now (modules, configuration, tables) lives as long as the process, so it is
    frozen out of every collection (after one: no garbage is frozen), and the
    youngest generation is collected every 10,000 new objects, not every 700: the
    collector took 3.5% of a replay's CPU (2026-12-07). Not in `serve`: no gain
    showed there, and garbage that waits longer for a collection (an error's
    traceback holding a stranger's 1 MB mail) would let a flood of such mails
    choose how much memory is held."""
    if gc.get_threshold()[0] >= YOUNGEST_COLLECTED_AT:
        return
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNGEST_COLLECTED_AT, *gc.get_threshold()[1:])


def cmd_replay(args: argparse.Namespace, config: Config) -> int:
    """Feed mailboxes through the queue and worker in Date order; replies to a Maildir.

    A temporary database is thrown away afterwards, so its password hashes use the
    fast cost: replaying thousands of mails then takes seconds, not minutes."""
    if not config.server.seed:
        config = config.with_overrides(server={"seed": DEFAULT_REPLAY_SEED})
    if ("security", "trust_from") not in config.given:  # a tester's recorded mail, answered into a folder
        config = config.with_overrides(security={"trust_from": True})
    if not args.db:
        config = config.with_overrides(security={"password_cost": "fast"})
    outbox = Path(args.outbox)
    default = outbox.resolve() == Path(DEFAULT_REPLAY_OUTBOX).resolve()
    stale = outbox_files(outbox)  # refused before the mail is read, emptied once it has been
    if stale and not (args.overwrite or default):
        raise UsageError(f"pbmserv replay: the outbox {outbox} holds {len(stale)} files of an earlier run; "
                         f"add --overwrite to empty it first, or name an empty folder with --outbox")
    mails = read_mailboxes(args.mailbox)
    for path in stale:
        path.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="pbmserv-replay-") as scratch:
        engine = make_engine(args.db or f"sqlite:///{Path(scratch) / 'replay.db'}", durable=bool(args.db))
        try:
            migrate(engine)
            sessions = sessionmaker(engine, expire_on_commit=False)
            settle_collector()
            with sessions.begin() as session:
                install_replay_key(session, config.server.seed)  # replies repeat from run to run
            worker = Worker(sessions, config)
            clock = naive_utc(min((mail.date for mail in mails if mail.date), default=REPLAY_EPOCH))
            stored: list[int] = []  # this run's mails (a --db may hold earlier ones)
            duplicates = 0
            progress = Progress(len(mails))
            due = earliest_due(sessions)
            for raw, date in mails:
                progress.step()
                clock = naive_utc(date) if date else clock
                if due is not None and due <= clock:
                    run_due(sessions, config, clock)  # deadlines that passed before this mail came
                    play_robots(sessions, config, clock)  # the turns they gave robots
                inbound_id, new = enqueue(sessions, raw, clock)
                if new:
                    stored.append(inbound_id)
                duplicates += not new
                worker.run_pending()
                due, robots_wait = due_and_robots(sessions)
                if robots_wait:
                    play_robots(sessions, config, clock)  # at the robots' turns, with this mail's clock
                    due = earliest_due(sessions)
            progress.done()
            deliver_queued(sessions, MaildirTransport(outbox, durable=False, server_address=config.server.address), clock)
            with sessions() as session:
                rows = session.execute(select(Inbound.message_id, Inbound.status, Inbound.error)
                                       .where(Inbound.id.in_(stored))).all()
        finally:
            engine.dispose()
    statuses = [row.status for row in rows]
    for row in rows:
        if row.status == "failed":
            last_line = (row.error.strip().splitlines() or ["unknown error"])[-1]
            print(f"pbmserv replay: mail {row.message_id} failed: {last_line}", file=sys.stderr)
    print(f"Replayed {len(mails)} mails: {statuses.count('done')} answered, {statuses.count('ignored')} ignored "
          f"(loop rules), {duplicates} duplicates, {statuses.count('failed')} failed.")
    written = sum(1 for path in (outbox / "new").iterdir() if path.is_file())  # the outbox held none before
    print(f"{written} replies written to {outbox / 'new'}/")
    return 1 if "failed" in statuses else 0


def cmd_serve(args: argparse.Namespace, config: Config) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for chatty in ("mail.log", "alembic"):  # every SMTP line and migration step
        logging.getLogger(chatty).setLevel(logging.WARNING)
    asked = {role for arg in args.role or ["all"] for role in arg.split(",") if role}
    unknown = asked - set(ROLES) - {"all"}
    if unknown:
        raise UsageError(f"pbmserv serve: no role {', '.join(sorted(unknown))}; choose from {', '.join(ROLES)}, all")
    roles = ROLES if "all" in asked else tuple(role for role in ROLES if role in asked)
    sessions = open_database(config.database.url, config.database.busy_timeout)
    sys.setswitchinterval(SWITCH_SECONDS)
    where = (f"the Maildir {config.outbound.maildir}/" if config.outbound.transport == "maildir"
             else f"{config.outbound.transport} ({config.outbound.relay_host}:{config.outbound.relay_port})"
             if config.outbound.transport == "smtp" else "memory")
    listening = f"on {config.smtp.host}:{config.smtp.port}" if "smtp" in roles else "(stored by other processes)"
    print(f"pbmserv: mail for {config.server.address} {listening}; database {shown_url(config.database.url)}; "
          f"replies to {where}; roles: {', '.join(roles)}. Stop with Ctrl-C.", flush=True)
    try:
        return serve(config, sessions, roles)
    except OSError as error:
        raise ServeError(f"cannot listen on {config.smtp.host}:{config.smtp.port}: {error.strerror or error}") from None


def cmd_deliver(args: argparse.Namespace, config: Config) -> int:
    """One message from an MTA pipe into the inbound queue: 0 once stored (or stored
    before), 75 (EX_TEMPFAIL) if it could not be, so the MTA keeps it and retries."""
    raw = sys.stdin.buffer.read() if sys.stdin is not None else b""
    try:
        sessions = open_database(config.database.url, config.database.busy_timeout)
        _id, new = enqueue(sessions, raw, utcnow(), args.sender)
    except Exception as error:  # noqa: BLE001 - whatever it was, the MTA must retry
        print(f"pbmserv deliver: could not store the message: {error}", file=sys.stderr)
        return EX_TEMPFAIL
    if args.process:
        Worker(sessions, config).run_pending()
        deliver_queued(sessions, make_transport(config), utcnow())
    return 0


def cmd_send(args: argparse.Namespace, config: Config) -> int:
    """Mail a command to the server named in the configuration, as a mail client would;
    with --reply, answer a mail the server wrote (a file of its Maildir) as its reader's
    mail client would: to its Reply-To, from its To, Subject `Re: ...`."""
    message = EmailMessage()
    to, sender, subject = config.server.address, args.sender, args.subject
    if args.reply:
        try:
            answered = email.message_from_bytes(Path(args.reply).read_bytes(), policy=email.policy.default)
        except OSError as error:
            raise UsageError(f"pbmserv send: cannot read {args.reply}: {error.strerror}") from None
        to = header_address(answered, "Reply-To") or header_address(answered, "From") or to
        sender = sender or header_address(answered, "To")
        subject = subject or f"Re: {header_text(answered, 'Subject')}"
        if answered["Message-ID"]:
            message["In-Reply-To"] = message["References"] = header_text(answered, "Message-ID")
    if not sender or subject is None:
        raise UsageError("pbmserv send: give --from ADDRESS and a SUBJECT, or --reply FILE (see pbmserv send --help)")
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = email.utils.formatdate(localtime=True)
    message["Message-ID"] = email.utils.make_msgid(domain=sender.rpartition("@")[2] or None)
    body = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    message.set_content(body)
    host, port = config.smtp.host, config.smtp.port
    try:
        with smtplib.SMTP(host, port, timeout=30, local_hostname="localhost") as client:
            client.send_message(message, to_addrs=[to])
    except (OSError, smtplib.SMTPException) as error:
        raise ServeError(f"cannot send to {host}:{port}: {error}") from None
    print(f"Sent {message['Message-ID']} to {to} through {host}:{port}.")
    return 0


class Progress:
    """`Replayed N of M mails` on a terminal, rewritten at most every half second, for
    replays long enough to wonder about; nothing when stderr is not a terminal."""

    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.count, self.stream = total, 0, stream
        self.shown = self.started = time.monotonic()
        self.live = total >= 500 and stream.isatty()

    def step(self) -> None:
        self.count += 1
        now = time.monotonic() if self.live else 0.0
        if self.live and now - self.shown >= 0.5:
            self.shown = now
            rate = self.count / max(now - self.started, 1e-9)
            self.stream.write(f"\rReplayed {self.count} of {self.total} mails ({rate:.0f}/s) ")
            self.stream.flush()

    def done(self) -> None:
        if self.live:
            self.stream.write("\r" + " " * 60 + "\r")
            self.stream.flush()


def cmd_tick(args: argparse.Namespace, config: Config) -> int:
    """Fire the deadlines that are due, deliver what they caused, and exit (for cron,
    run more often than `[games] downtime_grace`)."""
    sessions = open_database(config.database.url, config.database.busy_timeout)
    now = utcnow()
    keep_alive(sessions, config, now, retain_every=timedelta(0))  # old secrets masked on every run
    fired = run_due(sessions, config, now)
    robots = play_robots(sessions, config, now)
    delivered = deliver_queued(sessions, make_transport(config), now)
    print(f"{fired} deadlines passed; {robots} robot moves played; {delivered} replies delivered.")
    return 0


def cmd_queue(args: argparse.Namespace, config: Config) -> int:
    """List the mails that failed, or queue them again, or drop them."""
    sessions = open_database(config.database.url, config.database.busy_timeout)
    with sessions.begin() as session:
        if args.action == "list":
            rows = failed_rows(session)
            for name, row in rows:  # two lines each: what and why
                who = f"from {row.envelope_from or '?'}" if name == "in" else f"to {', '.join(row.recipients)}"
                reason = (row.error.strip().splitlines() or ["?"])[-1].strip()
                print(printable(f"{name}:{row.id}  {who}  {row.message_id}"))
                print("  " + printable(reason, WIDTH - 2))
            print(f"{len(rows)} failed mails.")
            return 0
        refs = [f"{name}:{row.id}" for name, row in failed_rows(session)] if args.refs == ["all"] else args.refs
        if not refs:
            raise UsageError(f"pbmserv queue {args.action}: name the mails (in:ID, out:ID or all)")
        try:
            for ref in refs:
                print(set_status(session, ref, "queued" if args.action == "retry" else "dropped"))
        except ValueError as error:
            raise ServeError(str(error)) from None
    return 0


def read_password(prompt: str) -> str:
    """A new password: one line of standard input, or typed twice at a terminal, never
    an argument (`ps` would show it); checked as `signup` checks it."""
    if sys.stdin is not None and sys.stdin.isatty():
        password = getpass.getpass(prompt)
        if getpass.getpass("Again: ") != password:
            raise CommandError("The two passwords differ.")
    else:
        line = sys.stdin.buffer.readline(1024) if sys.stdin is not None else b""
        try:
            password = line.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError:
            raise CommandError("The password on standard input is not UTF-8 text.") from None
        if not password:
            raise CommandError("No password: write it as one line on standard input.")
    if password.split() != [password]:
        raise CommandError("A password cannot contain spaces.")
    check_password(password)
    return password


def cmd_user(args: argparse.Namespace, config: Config) -> int:
    """Admin accounts (and any other), made and looked after on the command line."""
    sessions = open_database(config.database.url, config.database.busy_timeout)
    admins = {userid.lower() for userid in config.server.admins}
    if args.action == "list":
        return list_users(sessions, admins)
    if getattr(args, "extra", None):  # perhaps a password: not written back
        raise UsageError(f"pbmserv user {args.action}: too many arguments; give only the USERID "
                         "(a password is read from standard input)")
    try:
        with sessions() as session:
            existing = find_user(session, args.userid)
        if args.action == "add":
            # the rules of `signup`, but for the userids of admins: those are made here
            rules = SimpleNamespace(config=config.with_overrides(server={"admins": []}))
            check_userid(rules, args.userid)
            if existing is not None:
                raise CommandError(f"The userid {existing.userid} is taken.")
            addresses = check_addresses(rules, args.address, "pbmserv user add USERID ADDRESS...")
        elif existing is None:
            raise CommandError(f"There is no user {args.userid}.")
        if args.action in ("add", "password"):  # asked for before any transaction begins
            password_hash = hash_password(read_password(f"Password for {args.userid}: "),
                                          config.security.password_cost)
        with sessions.begin() as session:
            if args.action == "add":
                user = User(userid=args.userid, userid_key=args.userid.lower(), created_at=utcnow(),
                            password_hash=password_hash,
                            addresses=[Address(position=position, address=address, address_key=address.lower(),
                                               confirmed=True, failures=0)  # the admin vouches for them
                                       for position, address in enumerate(addresses)])
                session.add(user)
                role = "an admin" if user.userid_key in admins else "not an admin"
                done = f"Added {user.userid} ({role}) with {len(addresses)} confirmed address" + \
                    ("es." if len(addresses) > 1 else ".")
            else:
                user = find_user(session, args.userid)
                if user is None:
                    raise CommandError(f"There is no user {args.userid}.")
                if args.action == "password":
                    user.password_hash = password_hash
                    done = f"The password of {user.userid} is changed."
                else:
                    closing = args.action == "disable"
                    done = f"The account {user.userid} is {'closed' if closing else 'open'}" + \
                        ("." if user.disabled != closing else " already; nothing was changed.")
                    user.disabled = closing
                user.reset_token_hash, user.reset_expires = None, None  # a mailed token no longer works
    except CommandError as error:
        raise UsageError(printable(f"pbmserv user {args.action}: {' '.join(error.problem.split())}", None)) from None
    except IntegrityError:  # signed up by mail meanwhile
        raise UsageError(f"pbmserv user add: the userid {args.userid} is taken.") from None
    print(done)
    return 0


def list_users(sessions: sessionmaker, admins: set[str]) -> int:
    """Every account in aligned columns; an account's further addresses on lines of their own.
    The robot players are not accounts anyone signs in to: `players` lists them."""
    with sessions() as session:
        users = session.scalars(select(User).where(User.robot.is_(None)).order_by(User.userid_key)).all()
    rows = [("USERID", "STATE", "ADMIN", "CREATED", ["ADDRESSES"])]
    rows += [(user.userid, "closed" if user.disabled else "open", "yes" if user.userid_key in admins else "no",
              user.created_at.strftime("%Y-%m-%d"),
              [f"{a.address} ({'confirmed' if a.confirmed else 'pending'})" for a in user.addresses] or ["-"])
             for user in users]
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    for *columns, addresses in rows:
        first = "  ".join(text.ljust(width) for text, width in zip(columns, widths)) + "  "
        for number, address in enumerate(addresses):
            print((first if number == 0 else " " * len(first)) + printable(address, None))
    print(f"{len(users)} user{'s' if len(users) != 1 else ''}.")
    return 0


def cmd_migrate(args: argparse.Namespace, config: Config) -> int:
    open_database(config.database.url)
    print(f"Database {shown_url(config.database.url)} is up to date.")
    return 0


def build_parser() -> Parser:
    parser = Parser(prog="pbmserv", description="pbmserv, a play-by-email game server.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True

    replay = commands.add_parser("replay", help="process mailboxes and write the replies to a Maildir",
                                 description="Process the mail of mbox files or Maildir folders in Date: order, "
                                             "as the server would, and write every reply to a Maildir. Uses a "
                                             "fresh temporary database unless --db is given.")
    replay.add_argument("mailbox", nargs="+", help="an mbox file or a Maildir folder")
    replay.add_argument("--db", metavar="URL", help="database URL to use (and keep) instead of a temporary one")
    replay.add_argument("--outbox", metavar="DIR", default=DEFAULT_REPLAY_OUTBOX,
                        help=f"Maildir for the replies (default {DEFAULT_REPLAY_OUTBOX}, emptied at each run); "
                             "another folder must be empty or absent, unless --overwrite")
    replay.add_argument("--overwrite", action="store_true",
                        help="empty the --outbox Maildir (its new/, cur/ and tmp/ files) before the run")
    replay.set_defaults(handler=cmd_replay)

    migrate = commands.add_parser("migrate", help="bring the database schema up to date",
                                  description="Create the database or upgrade its schema to this version.")
    migrate.set_defaults(handler=cmd_migrate)

    serve = commands.add_parser("serve", help="run the server: SMTP listener, worker and sender",
                                description="Listen for mail on [smtp] host:port, play the commands, and "
                                            "deliver the replies, until SIGTERM or Ctrl-C.")
    serve.add_argument("--role", action="append", metavar="ROLE[,ROLE]",
                       help="take only these roles (smtp, worker, sender, scheduler, robots; default all); other "
                            "processes on the same database take the rest")
    serve.set_defaults(handler=cmd_serve)

    deliver = commands.add_parser("deliver", help="store one message from standard input (an MTA pipe)",
                                  description="Store the message on standard input in the inbound queue. "
                                              "Exit 0 once it is stored (or was already), 75 if it could "
                                              "not be, so that the MTA tries again.")
    deliver.add_argument("--sender", metavar="ADDRESS", help="the envelope sender, as the MTA knows it")
    deliver.add_argument("--process", action="store_true",
                         help="also process the queue and deliver the replies now, in this process")
    deliver.set_defaults(handler=cmd_deliver)

    send = commands.add_parser("send", help="mail a command to the configured server",
                               description="Send a mail with SUBJECT (and standard input as its body) "
                                           "from ADDRESS to the server at [smtp] host:port.")
    send.add_argument("--from", dest="sender", metavar="ADDRESS", help="your address")
    send.add_argument("--reply", metavar="FILE",
                      help="answer this mail of the server's (a file of its Maildir): to its Reply-To, "
                           "from its To, Subject 'Re: ...' (e.g. to confirm an address)")
    send.add_argument("subject", metavar="SUBJECT", nargs="?", help="the subject, e.g. 'signup alice secret'")
    send.set_defaults(handler=cmd_send)

    tick = commands.add_parser("tick", help="run the deadlines that are due, once (for cron)",
                               description="Fire every game deadline that is due now, deliver the "
                                           "replies they cause, and exit.")
    tick.set_defaults(handler=cmd_tick)

    queue = commands.add_parser("queue", help="list, retry or drop the mails that failed",
                                description="list: the mails the worker or the sender gave up on; "
                                            "retry: queue them again (a running server picks them up); "
                                            "drop: set them aside for good.")
    queue.add_argument("action", choices=("list", "retry", "drop"))
    queue.add_argument("refs", nargs="*", metavar="in:ID|out:ID|all")
    queue.set_defaults(handler=cmd_queue)

    user = commands.add_parser("user", help="add, list, close, open accounts; set a password",
                               description="Accounts on the command line: admin accounts are made here "
                                           "(mail cannot sign up a userid of [server] admins). Passwords "
                                           "are read from standard input, one line, or asked for at a "
                                           "terminal: never given as an argument.")
    actions = user.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    actions.required = True
    add = actions.add_parser("add", help="make an account; its addresses count as confirmed",
                             description="Make an account with these addresses, confirmed (you vouch "
                                         "for them); the password is read from standard input.")
    add.add_argument("userid", metavar="USERID")
    add.add_argument("address", metavar="ADDRESS", nargs="+")
    listing = actions.add_parser("list", help="every account: state, admin, addresses, created",
                                 description="Every account with its state, whether it is an admin, "
                                             "its addresses (confirmed or pending) and when it was made.")
    leaves = [add, listing]
    for action, text in (("disable", "close an account: its password no longer works"),
                         ("enable", "open a closed account again"),
                         ("password", "set a new password (read from standard input); a mailed "
                                      "reset token no longer works")):
        leaf = actions.add_parser(action, help=text, description=text[0].upper() + text[1:] + ".")
        leaf.add_argument("userid", metavar="USERID")
        leaf.add_argument("extra", nargs="*", help=argparse.SUPPRESS)  # refused without being echoed
        leaves.append(leaf)
    for leaf in leaves:
        leaf.set_defaults(handler=cmd_user)

    for sub in (replay, migrate, serve, deliver, send, tick, queue, *leaves):
        sub.add_argument("--config", metavar="FILE", help="TOML configuration (default: embedded defaults)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = None
    try:
        args = build_parser().parse_args(argv)
        config = load_config(args.config)
        return args.handler(args, config)
    except UsageError as error:
        print(error, file=sys.stderr)
        return 2
    except (ConfigError, MailboxError, DatabaseError, ServeError) as error:
        print(f"pbmserv: {error}", file=sys.stderr)
        # an MTA bounces a message on a permanent error: `deliver` keeps it retrying
        return EX_TEMPFAIL if args is not None and args.command == "deliver" else 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

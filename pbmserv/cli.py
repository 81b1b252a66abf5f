"""The `pbmserv` command line (DESIGN.md §4). Each sub-command exits 0 on success, and
otherwise prints one clear line on standard error and exits non-zero."""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import sessionmaker

from .config import Config, ConfigError, load_config
from .mail.mailbox import MailboxError, message_date, read_mailboxes
from .mail.outbound import MaildirTransport, deliver_queued
from .store.db import DatabaseError, make_engine, migrate, open_database
from .store.models import Inbound
from .store.queue import enqueue
from .worker import Worker

DEFAULT_REPLAY_OUTBOX = "var/replay-outbox"
DEFAULT_REPLAY_SEED = "replay"
REPLAY_EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)  # the clock when no mail has a Date


class UsageError(Exception):
    """Bad arguments: exit 2 with one line."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not argparse's usage block
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def naive_utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        return moment
    return moment.astimezone(timezone.utc).replace(tzinfo=None)


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def cmd_replay(args: argparse.Namespace, config: Config) -> int:
    """Feed mailboxes through the queue and worker in Date order; replies to a Maildir.

    A temporary database is thrown away afterwards, so its password hashes use the
    fast cost: replaying thousands of mails then takes seconds, not minutes."""
    if not config.server.seed:
        config = config.with_overrides(server={"seed": DEFAULT_REPLAY_SEED})
    if not args.db:
        config = config.with_overrides(security={"password_cost": "fast"})
    raws = read_mailboxes(args.mailbox)
    outbox = Path(args.outbox)
    with tempfile.TemporaryDirectory(prefix="pbmserv-replay-") as scratch:
        engine = make_engine(args.db or f"sqlite:///{Path(scratch) / 'replay.db'}")
        try:
            migrate(engine)
            sessions = sessionmaker(engine, expire_on_commit=False)
            worker = Worker(sessions, config)
            dates = [message_date(raw) for raw in raws]
            clock = naive_utc(min((d for d in dates if d), default=REPLAY_EPOCH))
            duplicates = 0
            for raw, date in zip(raws, dates):
                clock = naive_utc(date) if date else clock
                duplicates += not enqueue(sessions, raw, clock)[1]
                worker.run_pending()
            delivered = deliver_queued(sessions, MaildirTransport(outbox), clock)
            with sessions() as session:
                rows = session.execute(select(Inbound.message_id, Inbound.status, Inbound.error)).all()
        finally:
            engine.dispose()
    statuses = [row.status for row in rows]
    for row in rows:
        if row.status == "failed":
            last_line = (row.error.strip().splitlines() or ["unknown error"])[-1]
            print(f"pbmserv replay: mail {row.message_id} failed: {last_line}", file=sys.stderr)
    print(f"Replayed {len(raws)} mails: {statuses.count('done')} answered, {statuses.count('ignored')} ignored "
          f"(loop rules), {duplicates} duplicates, {statuses.count('failed')} failed.")
    print(f"{delivered} replies written to {outbox / 'new'}/")
    return 1 if "failed" in statuses else 0


def cmd_migrate(args: argparse.Namespace, config: Config) -> int:
    open_database(config.database.url)
    print(f"Database {config.database.url} is up to date.")
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
                        help=f"Maildir for the replies (default {DEFAULT_REPLAY_OUTBOX})")
    replay.set_defaults(handler=cmd_replay)

    migrate = commands.add_parser("migrate", help="bring the database schema up to date",
                                  description="Create the database or upgrade its schema to this version.")
    migrate.set_defaults(handler=cmd_migrate)

    for sub in (replay, migrate):
        sub.add_argument("--config", metavar="FILE", help="TOML configuration (default: embedded defaults)")
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        config = load_config(args.config)
        return args.handler(args, config)
    except UsageError as error:
        print(error, file=sys.stderr)
        return 2
    except (ConfigError, MailboxError, DatabaseError) as error:
        print(f"pbmserv: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

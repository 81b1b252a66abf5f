"""Shared test fixtures: a whole server in-process (real SQLite file, real worker,
memory transport) that tests feed with mails and read replies from."""

from __future__ import annotations

import email
import email.policy
import email.utils
import mailbox
import re
from pathlib import Path
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import EmailMessage

import pytest

from pbmserv.config import load_config
from pbmserv.keys import install_replay_key
from pbmserv.mail.outbound import MemoryTransport, deliver_queued
from pbmserv.robots.turns import play_robots
from pbmserv.scheduler import run_due
from pbmserv.store.db import open_database
from pbmserv.store.queue import enqueue
from pbmserv.worker import Worker

# Most tests play games between addresses taken at their word, as a closed test set-up
# may ([security] trust_from); the tests of confirmation set it false themselves. The
# environment carries it to the servers the tests start as processes.
os.environ.setdefault("PBMSERV_SECURITY_TRUST_FROM", "true")

FOOTER = '\n\n-- \npbmserv at pbmserv@localhost: send "help" for the commands.\n'


def maildir_messages(path) -> list[mailbox.MaildirMessage]:
    """The replies in a Maildir's new/, in the order the server wrote them: by Date (its
    clock), then by file name read with its numbers as numbers."""
    folder = Path(path) / "new"
    if not folder.is_dir():
        return []
    found = []
    for file in folder.iterdir():
        message = mailbox.MaildirMessage(file.read_bytes())
        natural = [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", file.name)]
        found.append((email.utils.parsedate_to_datetime(message["Date"]), natural, message))
    return [message for _date, _name, message in sorted(found, key=lambda item: item[:2])]


def plain(message) -> str:
    """The text/plain part of a reply, decoded: a board mail has an HTML part too."""
    part = next(p for p in message.walk() if p.get_content_type() == "text/plain")
    return part.get_payload(decode=True).decode(part.get_content_charset() or "utf-8")


@dataclass
class Reply:
    to: list[str]
    subject: str
    body: str  # the whole text body, footer included
    message: EmailMessage

    @property
    def text(self) -> str:
        """The body without the common footer."""
        assert self.body.endswith(FOOTER), self.body
        return self.body[: -len(FOOTER)] + "\n"


CLOCK_START = datetime(2026, 11, 1, 12, 0)  # a fresh Server's clock before its first mail


def sent(n: int) -> datetime:
    """The fake clock of the n-th mail a fresh Server gets (it adds a minute per mail)."""
    return CLOCK_START + timedelta(minutes=n)


def body_of(reply: Reply) -> str:
    """The reply's text without the footer and the blank line before it."""
    text = reply.text
    return text[:-1] if text.endswith("\n\n") else text


def mails(replies: list[Reply]) -> list[tuple[str, list[str], str]]:
    return [(r.subject, r.to, body_of(r)) for r in replies]


def drawing(top: str, top_row: list[int], bottom: str, bottom_row: list[int],
            captured: str = "alice 0, bob 0") -> str:
    """A Super-Wari (or, with 6 pits, Wari) board as drawn in mails: `top_row` as the
    top player reads it from the left (their h..a)."""
    n = len(bottom_row)
    letters = "abcdefghij"[:n]
    border = "+" + "----+" * n
    return ("   " + "    ".join(reversed(letters)) + "\n"
            + border + "\n"
            + "|" + "".join(f" {s:2d} |" for s in top_row) + f"   {top}\n"
            + border + "\n"
            + "|" + "".join(f" {s:2d} |" for s in bottom_row) + f"   {bottom}\n"
            + border + "\n"
            + "   " + "    ".join(letters) + "\n"
            + f"Captured: {captured}\n")


DEPLOYMENT = Path(__file__).parent.parent / "docs" / "deployment.md"


def deployment_block(*markers: str, **replacements: str) -> str:
    """The indented block of docs/deployment.md (a configuration, a command) holding
    every one of `markers`, with the guide's names, paths and ports replaced by a
    test's: so the tests run the very lines the guide gives."""
    blocks, block = [], []
    for line in DEPLOYMENT.read_text().split("\n") + [""]:
        if line.startswith("    ") or (block and not line.strip()):
            block.append(line[4:])
        elif block:
            blocks.append("\n".join(block).strip() + "\n")
            block = []
    [text] = [b for b in blocks if all(marker in b for marker in markers)]
    for old, new in replacements.items():
        text = text.replace(old, new)
    return text


def make_mail(sender: str, subject: str, body: str = "", *, date: datetime, message_id: str | None,
              headers: dict[str, str] | None = None) -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = "pbmserv@localhost"
    message["Subject"] = subject
    message["Date"] = email.utils.format_datetime(date)
    if message_id:
        message["Message-ID"] = message_id
    for name, value in (headers or {}).items():
        del message[name]  # replaced, e.g. To: a reply address
        message[name] = value
    message.set_content(body)
    return message.as_bytes()


class Died(BaseException):
    """What the process dying looks like from inside: nothing catches it."""


def die_on(monkeypatch, marker: bytes) -> None:
    """The worker's handling of a mail holding `marker` dies, as a crashing process would."""
    from pbmserv.worker import Handler

    handle = Handler.handle

    def dying(self):
        if marker in self.row.raw:
            raise Died
        return handle(self)
    monkeypatch.setattr(Handler, "handle", dying)


class Server:
    """Feed mails with `send`; each call returns the replies that mail caused."""

    def __init__(self, tmp_path, **overrides):
        sections = {"database": {"url": f"sqlite:///{tmp_path / 'test.db'}"},
                    "security": {"password_cost": "fast", "trust_from": True},
                    "server": {"seed": "test"},
                    "outbound": {"transport": "memory"}}
        for section, keys in overrides.items():
            sections.setdefault(section, {}).update(keys)
        if "database" not in overrides and not (tmp_path / "test.db").exists():
            copy_sqlite(sqlite_template(), tmp_path / "test.db")  # migrated once per process
        self.config = load_config(environ={}).with_overrides(**sections)
        self.sessions = open_database(self.config.database.url)
        with self.sessions.begin() as session:  # as replay does: tokens and salts repeat
            install_replay_key(session, self.config.server.seed)
        self.worker = Worker(self.sessions, self.config)
        self.transport = MemoryTransport()
        self.clock = CLOCK_START
        self.count = 0

    def send_raw(self, raw: bytes, envelope_from: str | None = None) -> list[Reply]:
        def process() -> None:
            enqueue(self.sessions, raw, self.clock, envelope_from)
            self.worker.run_pending()
            play_robots(self.sessions, self.config, self.clock)  # as replay does
        return self.collect(process)

    def collect(self, action) -> list[Reply]:
        """The replies that `action` causes, delivered."""
        before = len(self.transport.delivered)
        action()
        deliver_queued(self.sessions, self.transport, self.clock)
        replies = []
        for recipients, raw_reply in self.transport.delivered[before:]:
            message = email.message_from_bytes(raw_reply, policy=email.policy.default)
            text = message.get_body(("plain",))  # a board mail's HTML part is the other one
            replies.append(Reply(recipients, message["Subject"], text.get_content(), message))
        return replies

    def wait(self, delta: timedelta) -> list[Reply]:
        """Let `delta` pass: the deadlines that fall due fire, as `pbmserv tick` would."""
        self.clock += delta
        def fire() -> None:
            run_due(self.sessions, self.config, self.clock)
            play_robots(self.sessions, self.config, self.clock)
        return self.collect(fire)

    def send(self, sender: str, subject: str, body: str = "", *, message_id: str | None = "auto",
             headers: dict[str, str] | None = None) -> list[Reply]:
        self.count += 1
        self.clock += timedelta(minutes=1)
        if message_id == "auto":
            message_id = f"<test{self.count}@example.org>"
        return self.send_raw(make_mail(sender, subject, body, date=self.clock, message_id=message_id,
                                       headers=headers))

    def one(self, sender: str, subject: str, body: str = "", **kwargs) -> Reply:
        """Send and expect exactly one reply."""
        replies = self.send(sender, subject, body, **kwargs)
        assert len(replies) == 1, [(r.to, r.subject) for r in replies]
        return replies[0]

    def signup(self, *userids: str) -> None:
        for userid in userids:
            self.one(f"{userid}@example.org", f"signup {userid} {userid}-pw")

    def add_user(self, userid: str, password: str | None = None, address: str | None = None) -> None:
        """A user made directly in the database, as `pbmserv user add` does: how admins,
        whose userids signup refuses, come to be."""
        from pbmserv.passwords import hash_password
        from pbmserv.store.models import Address, User

        address = address or f"{userid}@example.org"
        with self.sessions.begin() as session:
            session.add(User(userid=userid, userid_key=userid.lower(), created_at=self.clock,
                             password_hash=hash_password(password or f"{userid}-pw", "fast"),
                             addresses=[Address(position=0, address=address, address_key=address.lower(),
                                                confirmed=True, failures=0)]))


FAST_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None  # memory-backed where there is one
POSTGRESQL = os.environ.get("TEST_DATABASE_URL", "")  # e.g. postgresql+psycopg://postgres@127.0.0.1/postgres


def database_url(name: str) -> str:
    from sqlalchemy import make_url
    return make_url(POSTGRESQL).set(database=name).render_as_string(hide_password=False)


_template: list[str] = []


def postgresql_template() -> str:
    """A database migrated to the newest schema, made once per test process and
    dropped when it ends; the test databases are copies of it."""
    if not _template:
        import atexit

        from sqlalchemy import create_engine, text

        from pbmserv.store.db import make_engine, migrate
        name = f"pbmserv_template_{os.getpid()}_{os.urandom(3).hex()}"
        admin = create_engine(POSTGRESQL, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        engine = make_engine(database_url(name))
        migrate(engine)
        engine.dispose()

        def drop() -> None:
            with admin.connect() as connection:
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()
        atexit.register(drop)
        _template.append(name)
    return _template[0]


_sqlite_template: list[Path] = []


def sqlite_template() -> Path:
    """A SQLite file migrated to the newest schema, made once per test process (and
    removed when it ends); the test databases are copies of it: migrating each one
    took half the time of the command tests."""
    if not _sqlite_template:
        import atexit

        from pbmserv.store.db import make_engine, migrate
        directory = tempfile.mkdtemp(prefix="pbmserv-template-", dir=FAST_DIR)
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
        path = Path(directory) / "template.db"
        engine = make_engine(f"sqlite:///{path}", durable=False)
        migrate(engine)
        engine.dispose()
        _sqlite_template.append(path)
    return _sqlite_template[0]


def copy_sqlite(source: Path, target: Path) -> None:
    """A consistent copy, by SQLite's own backup (whatever its write-ahead log holds)."""
    import sqlite3
    source_db, target_db = sqlite3.connect(source), sqlite3.connect(target)
    try:
        source_db.backup(target_db)
    finally:
        source_db.close()
        target_db.close()


class Databases:
    """Fresh databases for tests, migrated, and their removal afterwards: SQLite files
    in /dev/shm where there is one (the same server, without the disk syncs that
    would make the command tests slow), or databases made on the PostgreSQL server
    TEST_DATABASE_URL names; each a copy of a template migrated once."""

    def __init__(self, backend: str):
        self.backend = backend
        self.made: list[str] = []

    def new(self, empty: bool = False) -> str:
        """A new database, migrated (or `empty`: PostgreSQL only)."""
        if self.backend == "sqlite":
            directory = tempfile.mkdtemp(prefix="pbmserv-test-", dir=FAST_DIR)
            self.made.append(directory)
            copy_sqlite(sqlite_template(), Path(directory) / "test.db")
            return f"sqlite:///{directory}/test.db"
        from sqlalchemy import create_engine, text
        name = f"pbmserv_test_{os.getpid()}_{len(self.made)}_{os.urandom(3).hex()}"
        admin = create_engine(POSTGRESQL, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:  # a copy of a migrated template: migrating each one is slow
            template = "template0" if empty else postgresql_template()
            connection.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{template}"'))
        admin.dispose()
        self.made.append(name)
        return database_url(name)

    def drop_all(self) -> None:
        if self.backend == "sqlite":
            for directory in self.made:
                shutil.rmtree(directory, ignore_errors=True)
            return
        from sqlalchemy import create_engine, text
        admin = create_engine(POSTGRESQL, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            for name in self.made:
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request) -> str:
    """Every test that uses a `server` runs on SQLite, and on PostgreSQL when
    TEST_DATABASE_URL names a server (skipped, and said so, when it does not)."""
    if request.param == "postgresql" and not POSTGRESQL:
        pytest.skip("no PostgreSQL: set TEST_DATABASE_URL to run this test on one too")
    return request.param


@pytest.fixture
def make_server(tmp_path, backend):
    made: list[Server] = []
    databases = Databases(backend)

    def make(**overrides) -> Server:
        server = Server(tmp_path, database={"url": databases.new()}, **overrides)
        made.append(server)
        return server

    yield make
    for server in made:
        server.sessions.kw["bind"].dispose()
    databases.drop_all()


@pytest.fixture
def serve_url(tmp_path, backend):
    """A database for a server of the test's own (`RunningServer`, `replay --db`): a
    SQLite file beside the test's other files, and a PostgreSQL database too."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'serve.db'}"
        return
    databases = Databases(backend)
    yield databases.new()
    databases.drop_all()


@pytest.fixture
def server(make_server) -> Server:
    return make_server()

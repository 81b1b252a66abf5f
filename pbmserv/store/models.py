"""The database schema. The move log is the source of truth; `Game.state` is a cache of
replaying it, and `Game.version` guards it against concurrent writers."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.sql.expression import false, true
from sqlalchemy import event
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship
from sqlalchemy.orm.attributes import set_committed_value

# Named constraints so Alembic batch migrations on SQLite can address them.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


BOUNCES_TO_STOP = 3  # failed deliveries after which an address gets no more mail


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Setting(Base):
    """Facts about this database, e.g. its `instance` token used in reply Message-IDs."""

    __tablename__ = "settings"
    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(primary_key=True)
    userid: Mapped[str] = mapped_column(String(20))  # as registered
    userid_key: Mapped[str] = mapped_column(String(20), unique=True)  # lower case
    password_hash: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(DateTime)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)  # by an admin, or closed by `signoff`
    # `forgot` mails a reset token; only its SHA-256 and its expiry are kept.
    reset_token_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    reset_expires: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    # Mail preferences (`set`): an HTML part in board mails; which board mails come
    # (every | turn | digest); shown in `players`. A digest user's next digest is due at
    # `digest_due` (daily at `digest_at`, HH:MM UTC) and tells what happened after `digest_since`.
    html: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    mail: Mapped[str] = mapped_column(String(8), default="every", server_default="every")
    digest_at: Mapped[str] = mapped_column(String(5), default="07:00", server_default="07:00")
    digest_due: Mapped[datetime | None] = mapped_column(DateTime, nullable=True, index=True)
    digest_since: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    listed: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # A robot player's level (1 weak to 3 strong, `robots/`); None for a person. A robot
    # has no address and no usable password: it plays by itself and is never mailed.
    robot: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # loaded with the user: every board mail needs the addresses, every deadline the vacations
    addresses: Mapped[list[Address]] = relationship(
        back_populates="user", cascade="all, delete-orphan", order_by="Address.position", lazy="selectin"
    )
    vacations: Mapped[list[Vacation]] = relationship(cascade="all, delete-orphan", order_by="Vacation.start",
                                                     lazy="selectin")

    @property
    def emails(self) -> list[str]:
        """The addresses mail goes to: confirmed, and not bouncing."""
        return [a.address for a in self.addresses if a.confirmed and a.failures < BOUNCES_TO_STOP]


class Address(Base):
    __tablename__ = "addresses"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    address: Mapped[str] = mapped_column(String(320))
    address_key: Mapped[str] = mapped_column(String(320), index=True)  # lower case
    # An address other than the one the command came from waits for its owner to send
    # back the token mailed to it (only its SHA-256 is kept).
    confirmed: Mapped[bool] = mapped_column(Boolean, default=True)
    token_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    failures: Mapped[int] = mapped_column(Integer, default=0)  # delivery reports since it last wrote
    user: Mapped[User] = relationship(back_populates="addresses")


class GameRecord(Base):
    __tablename__ = "games"
    __table_args__ = (UniqueConstraint("game_type", "board", name="uq_games_type_board"),
                      Index("ix_games_type_status_updated", "game_type", "status", "updated_at"))  # history
    id: Mapped[int] = mapped_column(primary_key=True)
    game_type: Mapped[str] = mapped_column(String(32))
    board: Mapped[int] = mapped_column(Integer)
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    seed: Mapped[str] = mapped_column(String(128))
    setup_chance: Mapped[Any] = mapped_column(JSON, nullable=True)
    status: Mapped[str] = mapped_column(String(16))  # active | finished
    result: Mapped[str] = mapped_column(Text, default="")  # the status line once over
    state: Mapped[dict[str, Any]] = mapped_column(JSON)
    version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    updated_at: Mapped[datetime] = mapped_column(DateTime)
    # When each of the engine's named timers started (ISO times), and the earliest
    # moment one of them falls due: what the scheduler looks for.
    timers: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
    due_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True, index=True)
    # The server's own deadlines (games whose engine has none): seconds without a move
    # before a reminder and before a forfeit (0: never), and when each waiting seat's
    # turn began, {"0": {"since": ISO, "nagged": false, "pause": seconds of downtime}}.
    # who started the board, and so may not decline it: its first seat unless it is a
    # `rematch`, whose seats are rotated (None: the first seat, as on older boards)
    starter_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    nag_after: Mapped[int] = mapped_column(Integer, default=0)
    forfeit_after: Mapped[int] = mapped_column(Integer, default=0)
    clocks: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # A vote in progress (`propose` a draw, `undo`): {"kind": "draw" | "undo", "by": seat,
    # "accepted": [seats], "move": number of the first move taken back (undo)}.
    vote: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # The board waits for a robot's seat: what the robots role looks for (`robots/play.py`).
    robot_turn: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false(), index=True)
    # How many rows `pending` and `subscriptions` hold, kept by `count_collections`, so
    # that loading a board with none asks nothing more (`empty_collections`).
    pending_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    observer_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    seats: Mapped[list[Seat]] = relationship(
        back_populates="game", cascade="all, delete-orphan", order_by="Seat.seat", lazy="selectin"
    )
    moves: Mapped[list[Move]] = relationship(
        back_populates="game", cascade="all, delete-orphan", order_by="Move.number"
    )
    subscriptions: Mapped[list[Subscription]] = relationship(cascade="all, delete-orphan", order_by="Subscription.id")
    pending: Mapped[list[PendingMove]] = relationship(cascade="all, delete-orphan", order_by="PendingMove.id")

    __mapper_args__ = {"version_id_col": version}


class Seat(Base):
    __tablename__ = "seats"
    __table_args__ = (UniqueConstraint("game_id", "seat", name="uq_seats_game_seat"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"))
    seat: Mapped[int] = mapped_column(Integer)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    game: Mapped[GameRecord] = relationship(back_populates="seats")
    user: Mapped[User] = relationship(lazy="selectin")


class Move(Base):
    """One accepted action on a board, numbered from 1: a move or a resignation."""

    __tablename__ = "moves"
    __table_args__ = (UniqueConstraint("game_id", "number", name="uq_moves_game_number"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"))
    number: Mapped[int] = mapped_column(Integer)
    seat: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))  # move | resign | forfeit | timeout | undo | draw
    move: Mapped[str] = mapped_column(Text)
    chance: Mapped[Any] = mapped_column(JSON, nullable=True)
    comment: Mapped[str] = mapped_column(Text, default="")
    inbound_id: Mapped[int | None] = mapped_column(ForeignKey("inbound.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    auto: Mapped[bool] = mapped_column(Boolean, default=False)  # a queued move played when its turn came
    game: Mapped[GameRecord] = relationship(back_populates="moves")


class Vacation(Base):
    """A time a user is away: no reminders or forfeits while it lasts. `end` is planned
    when it starts and set to the return when the user comes back early."""

    __tablename__ = "vacations"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    start: Mapped[datetime] = mapped_column(DateTime)
    end: Mapped[datetime] = mapped_column(DateTime)


class Subscription(Base):
    """An observer of a board: gets every board mail, as the public sees it."""

    __tablename__ = "subscriptions"
    __table_args__ = (UniqueConstraint("game_id", "user_id", name="uq_subscriptions_game_user"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    user: Mapped[User] = relationship()


class PendingMove(Base):
    """A move waiting: `queue` (played when the seat's turn comes, if still legal) or
    `submit` (played when the player sends `confirm`). One of each kind per seat."""

    __tablename__ = "pending_moves"
    __table_args__ = (UniqueConstraint("game_id", "seat", "kind", name="uq_pending_moves_game_seat_kind"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"), index=True)
    seat: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))  # queue | submit
    move: Mapped[str] = mapped_column(Text)
    comment: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime)


class Preference(Base):
    """What a user accepts of one game type: `refuse` all challenges, or at most
    `limit` running games that others start with them (None: no limit)."""

    __tablename__ = "preferences"
    __table_args__ = (UniqueConstraint("user_id", "game_type", name="uq_preferences_user_game"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    game_type: Mapped[str] = mapped_column(String(32))
    refuse: Mapped[bool] = mapped_column(Boolean, default=False)
    limit: Mapped[int | None] = mapped_column(Integer, nullable=True)


class Seek(Base):
    """An open challenge (`GAME seek`): `players` seats in all, the seeker's and the
    joiners' (`joined`, user ids in the order they joined), with the parameters and
    deadlines the board will have. Open until it starts a board, is withdrawn, or
    expires at `expires_at`."""

    __tablename__ = "seeks"
    id: Mapped[int] = mapped_column(primary_key=True)  # the SEEK number players send
    game_type: Mapped[str] = mapped_column(String(32))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    players: Mapped[int] = mapped_column(Integer)
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    nag_after: Mapped[int] = mapped_column(Integer, default=0)
    forfeit_after: Mapped[int] = mapped_column(Integer, default=0)
    joined: Mapped[list[int]] = mapped_column(JSON, default=list)
    status: Mapped[str] = mapped_column(String(16), index=True)  # open | started | withdrawn | expired
    board: Mapped[int | None] = mapped_column(Integer, nullable=True)  # the board it started
    created_at: Mapped[datetime] = mapped_column(DateTime)
    expires_at: Mapped[datetime] = mapped_column(DateTime, index=True)
    user: Mapped[User] = relationship(lazy="selectin")


class Rating(Base):
    """A user's Elo rating in one two-player game type, and the rated games behind it."""

    __tablename__ = "ratings"
    __table_args__ = (UniqueConstraint("user_id", "game_type", name="uq_ratings_user_game"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    game_type: Mapped[str] = mapped_column(String(32))
    rating: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, default=0)
    user: Mapped[User] = relationship()


class Inbound(Base):
    """A received mail, stored raw before anything else happens to it."""

    __tablename__ = "inbound"
    id: Mapped[int] = mapped_column(primary_key=True)
    message_id: Mapped[str] = mapped_column(String(998), unique=True)  # or "sha256:<hash>"
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    envelope_from: Mapped[str | None] = mapped_column(String(320), nullable=True)
    received_at: Mapped[datetime] = mapped_column(DateTime)  # the worker's clock for it
    status: Mapped[str] = mapped_column(String(16), index=True)  # queued | done | ignored | failed
    error: Mapped[str] = mapped_column(Text, default="")
    processed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    # times a worker began on it; a mail that kills its worker is set aside after a few
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # its passwords masked in `raw`, once kept for [limits] keep_raw_days
    masked: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class Outbound(Base):
    """A reply waiting for (or done with) delivery: queued as a draft, rendered to
    `raw` by the sender (`mail/outbound.py`)."""

    __tablename__ = "outbound"
    id: Mapped[int] = mapped_column(primary_key=True)
    inbound_id: Mapped[int | None] = mapped_column(ForeignKey("inbound.id"), nullable=True)
    message_id: Mapped[str] = mapped_column(String(998), unique=True)
    recipients: Mapped[list[str]] = mapped_column(JSON)
    raw: Mapped[bytes] = mapped_column(LargeBinary)  # b"" until the sender renders the draft
    draft: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # None once rendered
    status: Mapped[str] = mapped_column(String(16), index=True)  # queued | sent | failed
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    error: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime)


class RateEvent(Base):
    """One use of a rate-limited action (`kind`) by `key`, for counting in a window."""

    __tablename__ = "rate_events"
    __table_args__ = (Index("ix_rate_events_kind_key_at", "kind", "key", "at"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    key: Mapped[str] = mapped_column(String(320))
    at: Mapped[datetime] = mapped_column(DateTime)


class ChangeCount(Base):
    """One row (id 1): how many rows of the tables a board's objects come from have been
    written, whoever wrote them. Triggers count them on SQLite (migration 0014), where a
    worker keeps the boards it played in memory while the count shows that nobody else
    wrote (`store/kept.py`); on PostgreSQL nothing counts and nothing is kept."""

    __tablename__ = "change_count"
    id: Mapped[int] = mapped_column(primary_key=True)
    count: Mapped[int] = mapped_column(Integer)


# The tables no trigger counts: the queues and the rate events, written with every mail,
# whose objects no kept board refers to (a worker forgets those it holds instead).
UNCOUNTED = frozenset({"inbound", "outbound", "rate_events", "change_count"})


COUNTED = {"pending": "pending_count", "subscriptions": "observer_count"}  # collection: its count column


@event.listens_for(GameRecord, "load")
def empty_collections(record: GameRecord, _context) -> None:
    """A board's collections that its counts say are empty, set empty without a query."""
    for collection, column in COUNTED.items():
        if getattr(record, column, None) == 0 and collection not in record.__dict__:
            set_committed_value(record, collection, [])


@event.listens_for(Session, "before_flush")
def count_collections(session: Session, _context, _instances) -> None:
    """Keep each board's counts equal to its collections, wherever they were changed."""
    for record in (*session.new, *session.dirty):
        if isinstance(record, GameRecord):
            for collection, column in COUNTED.items():
                if collection in record.__dict__ and getattr(record, column) != len(record.__dict__[collection]):
                    setattr(record, column, len(record.__dict__[collection]))

"""Account commands: help, signup, change password/address, list, message, broadcast."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

from ..clocks import clock_params
from ..games import games, get_game
from ..games.base import echoed
from ..keys import address_tag, derive, make_tag, tag_valid, tagged_address
from ..mail.outbound import Mail
from ..passwords import hash_password
from ..render import render
from ..store.models import Address, RateEvent, User
from ..robots import ROBOT_BOARDS, is_robot_name
from ..store.repo import all_users, find_user, players_of_type, rate_limited, recent_events
from .base import (Command, CommandError, Context, account_commands, ask_admins, authenticate, command, fit,
                   game_commands, load_commands, relay_replier, relay_reply_address)

USERID = re.compile(r"[A-Za-z0-9_.-]{1,20}")
USERID_CHARS = re.compile(r"[A-Za-z0-9_.-]+")
# what pbmserv delivers to: plain ASCII, a dot-atom local part, a domain of letters, digits, '-' and dots
ADDRESS = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
                     r"@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*")
RESERVED_USERIDS = {"all", "error"}  # words of the board subjects


def plural(count: int, noun: str) -> str:
    """'1 broadcast', '2 broadcasts', '3 players of superwari'."""
    if count == 1:
        return f"1 {noun}"
    first, _, rest = noun.partition(" ")
    return f"{count} {first}s" + (f" {rest}" if rest else "")


def check_userid(ctx: Context, userid: str) -> None:
    if not USERID.fullmatch(userid):
        shown = echoed(userid, 9)  # the line fits 78 columns
        raise CommandError(
            f"'{shown}' cannot be a userid: it has {len(userid)} characters, at most 20." if USERID_CHARS.fullmatch(userid)
            else f"'{shown}' cannot be a userid: use ASCII letters, digits, '_', '.' or '-'.",
            "Send: signup USERID PASSWORD [ADDRESS ...]")
    if userid.lower() in RESERVED_USERIDS:
        raise CommandError(f"'{userid}' cannot be a userid: the word is used in board subjects.",
                           "Choose another userid and send: signup USERID PASSWORD [ADDRESS ...]")
    if is_robot_name(userid):
        raise CommandError(f"'{userid}' cannot be a userid: robot1, robot2, ... are robot players.",
                           "Choose another userid and send: signup USERID PASSWORD [ADDRESS ...]")
    if userid.lower() in {a.lower() for a in ctx.config.server.admins}:  # admins are made on the command line
        raise CommandError(f"The userid {userid} is reserved for an admin of this server.",
                           "Choose another userid and send: signup USERID PASSWORD [ADDRESS ...]")


def check_password(password: str) -> None:
    if not 4 <= len(password) <= 64:
        raise CommandError("A password must have 4 to 64 characters (no spaces).",
                           "Choose another password and send the command again.")


def set_password(ctx: Context, user: User, password: str) -> None:
    """Give `user` a new password; a reset token mailed before it stops working."""
    check_password(password)
    user.password_hash = new_password_hash(ctx, user.userid, password)
    user.reset_token_hash, user.reset_expires = None, None


def check_addresses(ctx: Context, addresses: list[str], usage: str) -> list[str]:
    """The addresses without duplicates (ignoring case), or an error naming one that
    pbmserv cannot deliver to (or the server's own), or saying there are too many."""
    unique: dict[str, str] = {}
    for address in addresses:
        if not ADDRESS.fullmatch(address) or len(address) > 254 or \
                address_tag(ctx.config.server.address, address) is not None or \
                address.lower() == ctx.config.server.address.lower():
            raise CommandError(fit(f"'{address}' is not an address pbmserv can deliver to."),
                               "pbmserv delivers to plain ASCII addresses such as alice@example.org.\n"
                               f"Send: {usage}")
        unique.setdefault(address.lower(), address)
    limit = ctx.config.limits.addresses_per_account
    if len(unique) > limit:
        raise CommandError(f"An account has at most {limit} addresses, and this command names {len(unique)}.",
                           f"Name at most {limit} and send: {usage}")
    return list(unique.values())


def set_addresses(ctx: Context, user: User, addresses: list[str], signup: bool = False) -> list[str]:
    """Give `user` these addresses. The user's confirmed ones stay confirmed, and so does
    the sender's if `[security] trust_from` says a From is true; every other one gets
    one confirmation mail (within the daily caps) and nothing else until its owner
    replies to it. Returns the pending addresses."""
    sender = ctx.mail.sender.lower()
    confirmed = {a.address_key for a in user.addresses if a.confirmed} | \
        ({sender} if ctx.config.security.trust_from else set())
    rows, tokens = [], {}
    for position, address in enumerate(addresses):
        row = Address(position=position, address=address, address_key=address.lower(), confirmed=True, failures=0)
        if row.address_key not in confirmed:
            count_confirmation(ctx, row.address_key)
            tokens[row.address_key] = mailed_token(ctx, user.userid_key, address)
            row.confirmed, row.token_hash = False, token_hash(tokens[row.address_key])
        rows.append(row)
    user.addresses = rows
    ctx.session.flush()  # the rows' ids go into the confirmation addresses
    for row in rows:
        if not row.confirmed:
            tag = make_tag(ctx.session, "c", str(row.id), bind=row.token_hash)
            ctx.notices.append(Mail(to=[row.address], subject="pbmserv confirm", body=fit(render(
                "commands/confirm_request.txt", user=user, address=row.address, sender=ctx.mail.sender,
                token=tokens[row.address_key], welcome=signup and row.address_key == sender)),
                reply_to=tagged_address(ctx.config.server.address, tag)))
    return [row.address for row in rows if not row.confirmed]


def count_confirmation(ctx: Context, address_key: str) -> None:
    """Count one confirmation mail to `address_key`, asked for by the sender; an error
    over either daily cap, so that nobody can use the server to mail an address."""
    limits = ctx.config.limits
    if rate_limited(ctx.session, "confirm-address", address_key, ctx.now, limits.confirmations_per_address):
        raise CommandError(fit(f"{address_key} was sent {plural(limits.confirmations_per_address, 'confirmation')} "
                               "in the last 24 hours, the limit."),
                           "Leave that address out, or send the command again tomorrow.")
    if rate_limited(ctx.session, "confirm-sender", ctx.mail.sender.lower(), ctx.now,
                    limits.confirmations_per_sender):
        raise CommandError(fit(f"{ctx.mail.sender} asked for {plural(limits.confirmations_per_sender, 'confirmation')} "
                               "in the last 24 hours, the limit."),
                           "Send the command again tomorrow.")


def new_password_hash(ctx: Context, userid: str, password: str) -> str:
    """The hash to store for a new password, its salt derived from the server's key
    and the mail (a replay, whose key comes from its seed, stores the same hash)."""
    salt = bytes.fromhex(derive(ctx.session, "salt", ctx.inbound_id, userid.lower())[:32])
    return hash_password(password, ctx.config.security.password_cost, salt)


def mailed_token(ctx: Context, *purpose: str) -> str:
    """A token mailed to prove an address (confirm, reset): sixteen hex digits from
    the server's random key, the mail and the purpose (keys.py)."""
    return derive(ctx.session, "token", ctx.inbound_id, *purpose)[:16]


def token_hash(token: str) -> str:
    return hashlib.sha256(token.strip().lower().encode()).hexdigest()


def waiting_note(pending: list[str]) -> str:
    if not pending:
        return ""
    return fit(f"\nWaiting for confirmation: {', '.join(pending)}.\n"
               "Each was sent a mail to confirm it; it receives mail once confirmed.\n")


def confirm_address(ctx: Context, address: Address) -> str:
    """Mark `address` confirmed and answer as `confirm` does."""
    user = address.user
    address.confirmed, address.token_hash = True, None
    ctx.reply("pbmserv confirm", fit(f"{address.address} now receives the mail of {user.userid}.\n"),
              also_to=user.emails)
    return f"{address.address} confirmed for {user.userid}."


def confirm_by_reply(ctx: Context, payload: str, given_mac: str) -> str:
    """Confirm the address a confirmation mail went to, by a reply to its
    `pbmserv+c-ID-MAC` address: the MAC proves the mail was received, so any sender
    may send it."""
    address = ctx.session.get(Address, int(payload)) if payload.isdecimal() and len(payload) <= 12 else None
    if address is None or address.confirmed or not address.token_hash or \
            not tag_valid(ctx.session, "c", payload, given_mac, bind=address.token_hash):
        raise CommandError("This reply address confirms no address waiting for confirmation: it was\n"
                           "confirmed already, or replaced, or the address is not one of ours.",
                           "Send 'help confirm' for how to confirm an address.")
    return confirm_address(ctx, address)


@command
class Help(Command):
    name = "help"
    arguments = "[TOPIC]"
    summary = "this list, or the help of one command or game"
    description = "TOPIC is a command (e.g. 'help signup') or a game (e.g. 'help superwari')."
    max_args = 2

    def run(self, ctx: Context, args: list[str]) -> str:
        load_commands()
        words = [word.lower() for word in args]
        topic = " ".join(words)
        if not topic:
            commands = list(account_commands.values())
            body = render("commands/help.txt", address=ctx.config.server.address,
                          account=[c for c in commands if not c.admin_only],
                          admin=[c for c in commands if c.admin_only],
                          game_commands=list(game_commands.values()), games=list(games().values()))
            ctx.reply("pbmserv help", body)
            return "Help sent."
        if topic == "reply":
            local, _, domain = ctx.config.server.address.partition("@")
            ctx.reply("pbmserv help", render("commands/help_reply.txt", address=f"{local}+TOKEN@{domain}"))
            return "Help on reply sent."
        if topic == "robots":
            ctx.reply("pbmserv help", render("commands/help_robots.txt", limit=ROBOT_BOARDS))
            return "Help on robots sent."
        game = get_game(topic)
        if game is not None:
            ctx.reply(f"{game.title} help", game_help(ctx.config, game))
            return f"Help on {game.name} sent."
        found = help_topic(words)
        if found is not None:
            commands, game = found
            ctx.reply("pbmserv help", "\n".join(
                render("commands/help_topic.txt", usage=cmd.usage(game), cmd=cmd,
                       moves=game is not None and re.search(r"\bMOVE\b", cmd.arguments), game=game)
                for cmd in commands))
            return f"Help on {topic} sent."
        import difflib

        close = difflib.get_close_matches(topic, help_topics(), n=3)
        listed = "".join(f"  help {name}\n" for name in close)
        send = "Send one of them, or 'help'" if close else "Send 'help'"
        raise CommandError(f"There is no help topic '{echoed(topic, 40)}'.",
                           (f"The closest topics:\n{listed}" if close else "")
                           + f"{send} for the list of commands and games.")


def help_topic(words: list[str]) -> tuple[list[Command], object] | None:
    """The commands a help topic names, and the game it names them in (None: GAME):
    `change password`, `change` (both change commands), `move`, `GAME move`,
    `superwari move`."""
    topic = " ".join(words)
    if topic in account_commands:
        return [account_commands[topic]], None
    family = [cmd for name, cmd in account_commands.items() if name.split()[0] == topic]
    if family:
        return family, None
    if topic in game_commands:
        return [game_commands[topic]], None
    if len(words) == 2 and words[1] in game_commands:
        if words[0] == "game":
            return [game_commands[words[1]]], None
        game = get_game(words[0])
        if game is not None:
            return [game_commands[words[1]]], game
    return None


def help_topics() -> list[str]:
    """Every help topic, as it is written after `help`: what an unknown one is matched with."""
    families = sorted({name.split()[0] for name in account_commands if " " in name})
    names = list(games())
    return (["reply", "robots"] + list(account_commands) + families + list(game_commands) + names
            + [f"{game} {cmd}" for game in names for cmd in game_commands])


def game_help(config, game) -> str:
    """The rules, the parameters (the server's deadlines among them) and the commands."""
    load_commands()
    votes = ([("propose", "a draw")] if game.can_tie else []) + \
        ([("undo", "take back your last move")] if not (game.has_chance or game.hidden_information) else [])
    return render("commands/game_help.txt", game=game, params=game.params + clock_params(config, game),
                  votes=votes, commands=list(game_commands.values()))


@command
class Signup(Command):
    name = "signup"
    arguments = "USERID PASSWORD [ADDRESS ...]"
    summary = "open an account (addresses default to the one you write from)"
    description = ("A userid has 1 to 20 ASCII letters (a-z, A-Z), digits, '_', '.' or '-'; a\n"
                   "password 4 to 64 characters without spaces (case-sensitive). Each new\n"
                   "address gets a mail to confirm it (a reply does) before it receives\n"
                   "anything else.")
    min_args, max_args = 2, None
    password_args = (1,)

    def run(self, ctx: Context, args: list[str]) -> str:
        userid, password, *addresses = args
        check_userid(ctx, userid)
        existing = find_user(ctx.session, userid)
        if existing is not None:
            raise CommandError(f"The userid {existing.userid} is taken.",
                               "Choose another userid and send: signup USERID PASSWORD [ADDRESS ...]")
        check_password(password)
        addresses = check_addresses(ctx, addresses or [ctx.mail.sender], self.usage())
        user = User(userid=userid, userid_key=userid.lower(), created_at=ctx.now,
                    password_hash=new_password_hash(ctx, userid, password))
        ctx.session.add(user)
        pending = set_addresses(ctx, user, addresses, signup=True)
        if ctx.mail.sender.lower() not in {a.lower() for a in pending}:  # else its confirmation mail answers
            ctx.reply("pbmserv signup", fit(render("commands/signup.txt", user=user)) + waiting_note(pending),
                      also_to=user.emails)
        return f"Signed up {userid}."


@command
class ChangePassword(Command):
    name = "change password"
    arguments = "USERID OLD NEW"
    summary = "change your password"
    min_args = max_args = 3
    password_args = (1, 2)

    def run(self, ctx: Context, args: list[str]) -> str:
        userid, old, new = args
        user = authenticate(ctx, userid, old)
        set_password(ctx, user, new)
        ctx.reply("pbmserv change password", f"The password of {user.userid} is changed.\n", also_to=user.emails)
        return f"Password of {user.userid} changed."


@command
class ChangeAddress(Command):
    name = "change address"
    arguments = "USERID PASSWORD ADDRESS ..."
    summary = "replace your e-mail addresses"
    description = ("The old addresses get this notice once more. Each new address gets a mail\n"
                   "to confirm it (a reply does) before it receives anything else.")
    min_args, max_args = 3, None
    password_args = (1,)

    def run(self, ctx: Context, args: list[str]) -> str:
        userid, password, *addresses = args
        user = authenticate(ctx, userid, password)
        old = user.emails
        new = check_addresses(ctx, addresses, self.usage())
        pending = set_addresses(ctx, user, new)
        body = fit(f"The addresses of {user.userid} are now: {', '.join(new)}.\n") + waiting_note(pending)
        if ctx.mail.sender.lower() in {a.lower() for a in pending}:  # it gets its confirmation mail only
            ctx.notify([a for a in dict.fromkeys(old + user.emails)], "pbmserv change address", body)
        else:
            ctx.reply("pbmserv change address", body, also_to=old + user.emails)
        return f"Addresses of {user.userid} changed."


@command
class Confirm(Command):
    name = "confirm"
    arguments = "USERID TOKEN"
    summary = "confirm an address added to your account (the token was mailed to it)"
    min_args = max_args = 2
    password_args = (1,)

    def run(self, ctx: Context, args: list[str]) -> str:
        userid, token = args
        user = find_user(ctx.session, userid)
        address = next((a for a in (user.addresses if user else []) if not a.confirmed
                        and a.token_hash == token_hash(token)), None)
        if address is None:
            raise CommandError(f"That token confirms no address waiting for {userid}.",
                               "Send the confirm line exactly as the confirmation mail shows it.")
        return confirm_address(ctx, address)


@command
class List(Command):
    name = "list"
    summary = "the games this server plays"

    def run(self, ctx: Context, args: list[str]) -> str:
        ctx.reply("pbmserv list", render("commands/list.txt", games=list(games().values())))
        return "List of games sent."


def relay_text(ctx: Context, usage: str = "") -> str:
    """The text a relay command (or, without `usage`, a reply to a relayed mail) sends."""
    text = ctx.comment.strip("\n")
    if not text.strip():
        raise CommandError("There is no text to send.",
                           f"Write the text on the lines below the command line: {usage}" if usage
                           else "Write your text in the reply, above the quoted mail.")
    return text


@command
class Message(Command):
    name = "message"
    arguments = "USERID PASSWORD TO_USERID ..."
    summary = "send the text below the command to other players"
    description = "Your address is not shown; recipients answer with a message command of their own."
    min_args, max_args = 3, None
    password_args = (1,)
    takes_text = True

    def run(self, ctx: Context, args: list[str]) -> str:
        userid, password, *to = args
        user = authenticate(ctx, userid, password)
        limits = ctx.config.limits
        if len({name.lower() for name in to}) > limits.message_recipients:
            raise CommandError(f"A message goes to at most {limits.message_recipients} players, and this one names "
                               f"{len({name.lower() for name in to})}.",
                               "Send it to fewer players at a time, or broadcast it to the players of a game.")
        recipients = []
        for name in to:
            recipient = find_user(ctx.session, name)
            if recipient is None:
                raise CommandError(f"There is no user {name}.", "Check the userids and send the message again.")
            if recipient.disabled:
                raise CommandError(f"The account {recipient.userid} is closed: it gets no messages.",
                                   "Leave it out and send the message again.")
            if recipient not in recipients:
                recipients.append(recipient)
        return send_message(ctx, user, recipients, relay_text(ctx, self.usage()))


def send_message(ctx: Context, user: User, recipients: list[User], text: str) -> str:
    """Relay `text` from `user` to each of `recipients`, under the day's limit; each
    copy's Reply-To carries an answer back to `user`."""
    limits = ctx.config.limits
    sent = recent_events(ctx.session, "message", user.userid_key, ctx.now, timedelta(days=1))
    if sent + len(recipients) > limits.messages_per_day:
        raise CommandError(fit(f"{user.userid} has sent {plural(sent, 'message')} in the last 24 hours, and may send "
                               f"{limits.messages_per_day} a day (one for each recipient)."),
                           "Send it to fewer players, or again tomorrow.")
    ctx.session.add_all(RateEvent(kind="message", key=user.userid_key, at=ctx.now) for _ in recipients)
    for recipient in recipients:
        ctx.notify(recipient.emails, f"[pbmserv] Message from {user.userid} via PBM Server",
                   render("commands/message.txt", sender=user, text=text),
                   reply_to=relay_reply_address(ctx, "m", recipient, user.id))
    sent_to = ", ".join(r.userid for r in recipients)
    ctx.reply("pbmserv message", f"Your message was sent to {sent_to}.\n", also_to=user.emails)
    return f"Message sent to {sent_to}."


def answer_message(ctx: Context, payload: str, given_mac: str) -> str:
    """A reply to a relayed message (`pbmserv+m-READER.AUTHOR-MAC`): its text goes to
    the author, as a message would."""
    reader, author_id = relay_replier(ctx, "m", payload, given_mac, "message")
    author = ctx.session.get(User, author_id)
    if author is None or author.disabled:
        raise CommandError("The author of that message has closed the account: it gets no messages.",
                           "There is nobody to answer.")
    return send_message(ctx, reader, [author], relay_text(ctx))


RELAY_SUBJECT = re.compile(r"(message|broadcast) from (\S+) via PBM Server", re.IGNORECASE)


def relay_reply_note(ctx: Context, kind: str, author: str) -> str:
    """A reply to a broadcast (or to a message, by a client that ignored its Reply-To)
    came to the server: say where it went, and how to write to the author and the admins."""
    author = echoed(author, 20)
    where = ("A broadcast cannot be answered by replying to it" if kind.lower() == "broadcast"
             else "This reply reached the server, not the message's reply address")
    ctx.reply("pbmserv note", fit(
        f"Your reply to the {kind.lower()} from {author} came to the server, and went to nobody:\n"
        f"{where}.\n\n") + f"To write to {author}, send: message USERID PASSWORD {author}\n"
        "with your text on the lines below it.\n\n" + ask_admins(ctx, "for anything else") + "\n")
    return f"Reply to a {kind.lower()} answered with a note."


@command
class Broadcast(Command):
    name = "broadcast"
    arguments = "USERID PASSWORD [GAME]"
    summary = "send the text below the command to every player of GAME"
    description = ("Goes to every user who has played GAME; limited to a few a day.\n"
                   "Without GAME (admins only) it goes to every user.")
    min_args, max_args = 2, 3
    password_args = (1,)
    takes_text = True

    def run(self, ctx: Context, args: list[str]) -> str:
        userid, password, *rest = args
        user = authenticate(ctx, userid, password)
        is_admin = user.userid_key in {a.lower() for a in ctx.config.server.admins}
        if rest:
            game = get_game(rest[0])
            if game is None:
                raise CommandError(f"There is no game '{rest[0]}'.", "Send 'list' for the games of this server.")
            audience = players_of_type(ctx.session, game.name)
            if user not in audience and not is_admin:
                raise CommandError(f"Only players of {game.name} may broadcast to them, and {user.userid} has not played it.",
                                   "Send a message to players you know instead: message USERID PASSWORD TO_USERID ...")
            label = f"player of {game.name}"
        elif is_admin:
            audience, label = all_users(ctx.session), "user"
        else:
            raise CommandError("Only admins may broadcast to every user.",
                               f"Name a game you play: broadcast {user.userid} PASSWORD GAME")
        text = relay_text(ctx, self.usage())
        if not is_admin and rate_limited(ctx.session, "broadcast", user.userid_key, ctx.now,
                                         ctx.config.limits.broadcasts_per_day):
            limit = ctx.config.limits.broadcasts_per_day
            raise CommandError(f"{user.userid} has sent {plural(limit, 'broadcast')} in the last 24 hours, the limit.",
                               "Send it again tomorrow.")
        recipients = [u for u in audience if u.id != user.id and not u.disabled]  # closed accounts get nothing
        for recipient in recipients:
            ctx.notify(recipient.emails, f"[pbmserv] Broadcast from {user.userid} via PBM Server",
                       render("commands/broadcast.txt", address=ctx.config.server.address, text=text))
        sent_to = f"{plural(len(recipients), label)}"
        ctx.reply("pbmserv broadcast", f"Your broadcast was sent to {sent_to}.\n", also_to=user.emails)
        return f"Broadcast sent to {sent_to}."

"""Delivery reports (RFC 3464): which recipients a bounce says have failed."""

from __future__ import annotations

from email.message import EmailMessage
from itertools import islice

from .loopguard import MAX_PARTS


def failed_recipients(msg: EmailMessage) -> list[str]:
    """The addresses that `message/delivery-status` parts report with `Action: failed`;
    [] for any other mail. Never raises."""
    found: list[str] = []
    try:
        for part in islice(msg.walk(), MAX_PARTS):
            if part.get_content_type() != "message/delivery-status":
                continue
            for block in part.get_payload() or []:
                if str(block.get("Action", "")).strip().lower() != "failed":
                    continue
                recipient = str(block.get("Final-Recipient") or block.get("Original-Recipient") or "")
                address = recipient.partition(";")[2].strip().strip("<>")
                if "@" in address and address.lower() not in found:
                    found.append(address.lower())
    except Exception:  # noqa: BLE001 - a malformed report is just not a useful one
        return found
    return found

"""Answer links: an address that opens one question of one call, signed with the store's own
link key, valid until the question's deadline (or a week), and nothing else.

``{public}/a/{key}/{request id}/{expires}/{signature}``: the signature is HMAC-SHA256, with
the key the store made for itself, of the call's key, the question's id and the moment the
link expires (seconds since the epoch). A link altered in any byte, given for another
question, or used after it expires opens nothing. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Final
from urllib.parse import quote

__all__ = ["LINK_LIFE", "answer_link", "link_holds", "link_path"]

LINK_LIFE: Final = 7 * 24 * 3600
"""Seconds a link lives when its question names no earlier deadline (a week)."""
_SIGNATURE: Final = 32  # hex digits of the signature kept in the address


def _signature(link_key: str, key: str, request_id: str, expires: int) -> str:
    message = "\x00".join(("toolnexus answer link", key, request_id, str(expires))).encode()
    return hmac.new(link_key.encode(), message, hashlib.sha256).hexdigest()[:_SIGNATURE]


def link_path(link_key: str, key: str, request_id: str, expires: int) -> str:
    """The link's path, from the inbox's root: ``/a/KEY/ID/EXPIRES/SIGNATURE``."""
    signature = _signature(link_key, key, request_id, int(expires))
    return f"/a/{quote(key, safe='')}/{quote(request_id, safe='')}/{int(expires)}/{signature}"


def answer_link(public_url: str, link_key: str, key: str, request_id: str, expires: int) -> str:
    """The whole address of the link, under the inbox's public address ``public_url``."""
    return public_url.rstrip("/") + link_path(link_key, key, request_id, expires)


def link_holds(link_key: str, key: str, request_id: str, expires: str, signature: str, now: float) -> bool:
    """Whether a link's parts are one the store signed, and it has not expired."""
    if not expires.isdigit() or len(expires) > 12 or len(signature) != _SIGNATURE:
        return False
    if int(expires) < now:
        return False
    return hmac.compare_digest(_signature(link_key, key, request_id, int(expires)), signature)

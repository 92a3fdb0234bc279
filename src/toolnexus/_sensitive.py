"""Spotting form fields that ask for a secret.

The MCP elicitation spec says a server MUST NOT use a form to ask for passwords, API keys,
tokens or payment credentials (URL mode exists for that). A client cannot know what a field
is for, but it can read its name, title and description; ``sensitive_fields`` does, so a
resolver can warn before the user types a secret into a form.

Standard library only: importing it costs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["sensitive_fields"]

# Single words that name a secret. Matched against whole words, so "tokens" (as in "max
# tokens" of a language model) and "spinner" do not count, while "token" and "PIN" do.
_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "passcode",
        "secret",
        "token",
        "apikey",
        "privatekey",
        "pin",
        "cvv",
        "cvv2",
        "cvc",
        "cvc2",
        "otp",
        "totp",
        "mfa",
        "2fa",
        "passkey",
        "credential",
        "credentials",
        "iban",
        "ssn",
    }
)

# Two words in a row that name a secret ("api key", "apiKey", "API_KEY", "card number", ...).
_PAIRS = frozenset(
    {
        ("api", "key"),
        ("private", "key"),
        ("secret", "key"),
        ("access", "key"),
        ("signing", "key"),
        ("card", "number"),
        ("credit", "card"),
        ("debit", "card"),
        ("security", "code"),
        ("card", "verification"),
        ("ssh", "key"),
        ("social", "security"),
        ("account", "number"),
        ("routing", "number"),
        ("cc", "number"),
        ("card", "no"),
    }
)

# Splits "apiKey", "API_KEY", "api-key" and "The API key" alike into lower-case words.
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _looks_secret(text: str) -> bool:
    words = _words(text)
    for i, word in enumerate(words):
        if word in _WORDS:
            return True
        # The regex splits digits from letters: a trailing digit belongs to the word before
        # it ("cvv2"), a leading one to the word after it ("2fa", "2FA").
        if i and (words[i - 1].isdigit() or word.isdigit()) and (words[i - 1] + word) in _WORDS:
            return True
        if i and (words[i - 1], word) in _PAIRS:
            return True
    return False


def sensitive_fields(schema: Mapping[str, Any] | None) -> list[str]:
    """The names of the properties of a ``requestedSchema`` that look like they ask for a secret.

    A property counts when its name, ``title`` or ``description`` names a password,
    passphrase, passcode, passkey, secret, token, credentials, API key, private, secret,
    access, signing or SSH key, PIN, one-time password (OTP, TOTP), MFA or 2FA code, card
    number (``cc_number``, ``card no``), CVV/CVC or security code, IBAN, account or routing
    number, or social security number (SSN), in any spelling (``apiKey``, ``API_KEY``,
    ``"Your API key"``). Words are matched whole, so ``max_tokens``, ``account`` or
    ``spinner`` do not count.

    Returns the names in the schema's order, an empty list when nothing looks secret or
    when ``schema`` is not a mapping with a ``properties`` mapping. This is a heuristic
    for a warning, not a guarantee: a server can always disguise what it asks for.
    """
    if not isinstance(schema, Mapping):
        return []
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    found: list[str] = []
    for name, prop in properties.items():
        texts = [str(name)]
        if isinstance(prop, Mapping):
            texts.extend(prop[key] for key in ("title", "description") if isinstance(prop.get(key), str))
        if any(_looks_secret(text) for text in texts):
            found.append(str(name))
    return found

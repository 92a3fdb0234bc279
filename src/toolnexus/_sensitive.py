"""Spotting form fields that ask for a secret.

The MCP elicitation spec says a server MUST NOT use a form to ask for passwords, API keys,
tokens or payment credentials (URL mode exists for that). A client cannot know what a field
is for, but it can read its name, title and description; ``sensitive_fields`` does, so a
resolver can warn before the user types a secret into a form.

Standard library and the form model only: importing it costs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .forms import Form, FormError, read_form

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
# Where a clause ends: a negation ("do not give us your PIN") reaches no further.
_CLAUSE_END = re.compile(r"[.;:!?()\[\]{}\n]")
# "do not", "never", "don't" (split as "don", "t") followed by a verb of giving: what follows
# tells the user NOT to give a secret, as the reference test server's integer field does.
_NEGATIONS = frozenset({"not", "never", "dont", "nor"})
_GIVING = frozenset(
    {
        "give",
        "share",
        "enter",
        "type",
        "send",
        "provide",
        "include",
        "put",
        "paste",
        "reveal",
        "disclose",
        "tell",
    }
)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _negated_from(words: list[str]) -> int:
    """The index after which the clause tells the user not to give what it names;
    ``len(words)`` when it does not."""
    for i, word in enumerate(words):
        if word in _NEGATIONS or (word == "don" and words[i + 1 : i + 2] == ["t"]):
            following = [w for w in words[i + 1 : i + 4] if w not in ("t", "ever")]
            if following[:1] and following[0] in _GIVING:  # "do not worry, enter ..." is no negation
                return i
    return len(words)


def _names_secret(words: list[str], i: int) -> bool:
    word = words[i]
    if word in _WORDS:
        return True
    if i == 0:
        return False
    # The regex splits digits from letters: a trailing digit belongs to the word before
    # it ("cvv2"), a leading one to the word after it ("2fa", "2FA").
    if (words[i - 1].isdigit() or word.isdigit()) and (words[i - 1] + word) in _WORDS:
        return True
    return (words[i - 1], word) in _PAIRS


def _looks_secret(text: str) -> bool:
    for clause in _CLAUSE_END.split(text):
        words = _words(clause)
        # "no password" and "without a token" say what is NOT needed.
        limit = _negated_from(words)
        for i in range(limit):
            if _names_secret(words, i) and not (i and words[i - 1] in ("no", "without")):
                return True
    return False


def sensitive_fields(form: Form | Mapping[str, Any] | None) -> list[str]:
    """The names of the fields of a form that look like they ask for a secret.

    ``form`` is a [`Form`][toolnexus.forms.Form], or a ``requestedSchema``, which is read
    with [`read_form`][toolnexus.forms.read_form]. A field counts when its name, title or
    description names a password, passphrase, passcode, passkey, secret, token,
    credentials, API key, private, secret, access, signing or SSH key, PIN, one-time
    password (OTP, TOTP), MFA or 2FA code, card number (``cc_number``, ``card no``),
    CVV/CVC or security code, IBAN, account or routing number, or social security number
    (SSN), in any spelling (``apiKey``, ``API_KEY``, ``"Your API key"``). Words are matched
    whole, so ``max_tokens``, ``account`` or ``spinner`` do not count; and a text that
    tells the user not to give one (``"do not give us your PIN"``, ``"never share your
    password"``, ``"no password needed"``) does not count for what it rules out.

    Returns the names in the form's order; an empty list when nothing looks secret, or
    when ``form`` is not a form that [`read_form`][toolnexus.forms.read_form] can read
    (such a form cannot be answered through toolnexus at all). This is a heuristic for a
    warning, not a guarantee: a server can always disguise what it asks for.
    """
    if not isinstance(form, Form):
        if not isinstance(form, Mapping):
            return []
        try:
            form = read_form(form)
        except FormError:
            return []
    found: list[str] = []
    for spec in form.fields:
        texts = [spec.name, spec.title or "", spec.description or ""]
        if any(_looks_secret(text) for text in texts):
            found.append(spec.name)
    return found

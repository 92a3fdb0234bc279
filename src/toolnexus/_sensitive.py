"""Spotting text that names a secret: the word rules behind ``toolnexus.forms.sensitive_fields``.

The MCP elicitation spec says a server MUST NOT use a form to ask for passwords, API keys,
tokens or payment credentials (URL mode exists for that). A client cannot know what a field
is for, but it can read its name, title and description; ``looks_secret`` reads one such
text. Its time is linear in the length of the text (one regular expression of ours, then
one pass over the words). The form model bounds how much text a form holds.

Standard library only: importing it costs nothing.
"""

from __future__ import annotations

import re

__all__ = ["looks_secret"]

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
_CLAUSE_END = re.compile(r"[.;:!?()\[\]{}\n]+")
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


def looks_secret(text: str) -> bool:
    """Whether ``text`` (a field's name, title or description) names a secret."""
    for clause in _CLAUSE_END.split(text):
        words = _words(clause)
        if not words:
            continue
        # "no password" and "without a token" say what is NOT needed.
        limit = _negated_from(words)
        for i in range(limit):
            if _names_secret(words, i) and not (i and words[i - 1] in ("no", "without")):
                return True
    return False

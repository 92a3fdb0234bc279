"""Rules that match a §10 [`Request`][toolnexus.Request] and say how to answer it.

One reading of a rule, shared by the policy resolver ([`Policy`][toolnexus.policy.Policy])
and the scripted test resolver ([`ScriptedResolver`][toolnexus.testing.ScriptedResolver]): a
mapping of what it matches (``server``, ``prompt``, ``fields``, ``kind``, ``url_host``) and
what it does (``action``, ``values``, ``allow_secrets``). Everything that can be known to be
wrong about a rule is a ``TypeError``/``ValueError`` when it is read, naming the rule and
the key.

Standard library, the wire values and the form model only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ._answering import form_of
from ._wire import Answer, Request
from .errors import FormError, UrlError
from .forms import Form
from .urls import UrlReading, read_url

__all__ = ["Asked", "Rule", "describe_request", "read_rule"]

KINDS = ("input", "authorization")


class Asked:
    """A request being matched, with its form read once (for every rule that looks at it)."""

    def __init__(self, request: Request) -> None:
        self.request = request

    @cached_property
    def form(self) -> Form | None:
        """The request's form (``form_of``); ``None`` when it
        is not a form or its schema is not one the form model reads."""
        if self.request.kind != "input":
            return None
        try:
            return form_of(self.request)
        except FormError:
            return None

    @property
    def names(self) -> tuple[str, ...] | None:
        """The form's field names, in order; ``None`` when there is no readable form."""
        form = self.form
        return None if form is None else form.names

    @cached_property
    def url(self) -> UrlReading | None:
        """A URL request's URL as a browser reads it ([`read_url`][toolnexus.urls.read_url]);
        ``None`` when it has none, or it cannot be parsed."""
        request = self.request
        if request.kind != "authorization" or not request.url:
            return None
        try:
            return read_url(request.url)
        except UrlError:
            return None

    @property
    def host(self) -> str | None:
        """The host a browser opens for a URL request's URL, lower-cased; ``None`` when it
        has none."""
        url = self.url
        return (url.host or None) if url is not None else None


def describe_request(asked: Asked | Request) -> str:
    """One line saying what a request asks, server text escaped (``repr``)."""
    if isinstance(asked, Request):
        asked = Asked(asked)
    request = asked.request
    parts = [f"kind {request.kind!r}", f"prompt {request.prompt!r}"]
    names = asked.names
    if names is not None:
        parts.append(f"fields {list(names)!r}")
    elif request.kind == "input":
        parts.append("no readable form")
    if request.url is not None:
        parts.append(f"url {request.url!r}")
    return ", ".join(parts)


_JSON_SCALARS = (str, int, float, bool, type(None))


def _check_value(where: str, name: str, value: object) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where}: values[{name!r}] must be a finite number")
    if isinstance(value, _JSON_SCALARS):
        return
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return
    raise TypeError(
        f"{where}: values[{name!r}] must be a string, number, boolean, null or a list of strings, "
        f"not {type(value).__name__}"
    )


def _bare_host(where: str, value: str) -> str:
    """A rule's ``url_host`` read as a URL's host is (``read_url(url).host``): as a browser
    reads it, so that ``bücher.example`` and its punycode ``xn--bcher-kva.example`` name one
    host, and so do ``AUTH.example.com`` and ``auth.example.com``; an IPv6 address without its
    brackets."""
    from .urls import read_url

    host = value.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    bad = not host or any(ch in host for ch in "/@?#\\ ") or not host.isprintable()
    if not bad:
        try:
            reading = read_url(f"https://[{host}]/" if ":" in host else f"https://{host}/")
        except UrlError:
            bad = True
        else:
            host = reading.host
            bad = not host or reading.port is not None
    if bad:
        raise ValueError(
            f"{where}: url_host must be a bare host name such as 'auth.example.com', not {value!r}"
        )
    return host


@dataclass(frozen=True)
class Rule:
    """One rule, read and checked."""

    index: int
    """Its position in the list it came from (0-based)."""
    source: Mapping[str, Any]
    """The mapping it was read from, for messages."""
    action: str
    server: str | None = None
    prompt: str | None = None
    pattern: re.Pattern[str] | None = None
    """``prompt`` compiled, when prompts are regular expressions (a policy)."""
    fields: frozenset[str] | None = None
    kind: str | None = None
    url_host: str | None = None
    values: Mapping[str, Any] | None = None
    allow_secrets: bool = False

    def mismatch(self, asked: Asked, server: str | None = None) -> str | None:
        """Why this rule does not match the request (asked by ``server``), or ``None`` when it does."""
        request = asked.request
        if self.server is not None and self.server != server:
            return f"the server is {server!r}, not {self.server!r}"
        if self.kind is not None and request.kind != self.kind:
            return f"the kind is {request.kind!r}, not {self.kind!r}"
        if self.url_host is not None:
            if request.kind != "authorization":
                return "it is not a URL request"
            url = asked.url
            if url is None:
                return "it has no URL a browser can read"
            if not url.plain:  # an allow-list matches only a URL that means what it shows
                return "its URL has a user name, a backslash, tabs or control characters: no url_host matches"
            if url.host != self.url_host:
                return f"the URL's host is {url.host!r}, not {self.url_host!r}"
        if self.prompt is not None:
            if self.pattern is not None:
                if self.pattern.search(request.prompt) is None:
                    return f"the prompt does not match {self.prompt!r}"
            elif self.prompt not in request.prompt:
                return f"the prompt does not contain {self.prompt!r}"
        if self.fields is not None:
            names = asked.names
            if names is None:
                return "it is not a form" if request.kind != "input" else "its form cannot be read"
            if frozenset(names) != self.fields:
                return f"the form's fields are {sorted(names)!r}, not {sorted(self.fields)!r}"
        return None

    def answer(self, request: Request, values: Mapping[str, Any] | None = None) -> Answer:
        """The answer this rule gives ``request``: accept (with ``values``, or the rule's own
        for a form), decline or cancel."""
        if self.action == "accept":
            if request.kind == "authorization":
                return Answer.accept(request)
            content = self.values if values is None else values
            return Answer.accept(request, {k: _copy(v) for k, v in (content or {}).items()})
        if self.action == "decline":
            return Answer.decline(request)
        return Answer.cancel(request)

    def describe(self) -> str:
        """The rule as written, for messages."""
        return ", ".join(f"{key}={value!r}" for key, value in self.source.items())


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, (list, tuple)) else value


def read_rule(
    index: int,
    rule: object,
    *,
    what: str,
    keys: Collection[str],
    actions: Collection[str],
    regex: bool,
) -> Rule:
    """Read one rule, checking every key.

    Args:
        index: its position, named in every error (``"rule 2: ..."``).
        rule: the mapping.
        what: the word for a rule in errors (``"rule"``, ``"step"``).
        keys: the keys allowed.
        actions: the actions allowed.
        regex: ``prompt`` is a regular expression, compiled now (else a substring).
    """
    where = f"{what} {index}"
    if not isinstance(rule, Mapping):
        raise TypeError(f"{where} must be a mapping (a JSON object), not {type(rule).__name__}")
    for key in rule:
        if key not in keys:
            raise ValueError(f"{where}: unknown key {key!r} (allowed: {', '.join(keys)})")
    if "action" not in rule:
        raise ValueError(f"{where}: action is missing (one of {', '.join(actions)})")
    action = rule["action"]
    if not isinstance(action, str) or action not in actions:
        raise ValueError(f"{where}: action must be one of {', '.join(actions)}, not {action!r}")
    found: dict[str, Any] = {"index": index, "source": dict(rule), "action": action}
    for key in ("server", "prompt", "url_host"):
        if key in rule:
            value = rule[key]
            if not isinstance(value, str):
                raise TypeError(f"{where}: {key} must be a string, not {type(value).__name__}")
            if key == "url_host":
                value = _bare_host(where, value)
            found[key] = value
    if "prompt" in rule and regex:
        try:
            found["pattern"] = re.compile(rule["prompt"])
        except re.error as err:
            raise ValueError(f"{where}: prompt is not a valid regular expression ({err})") from None
    if "kind" in rule:
        if rule["kind"] not in KINDS:
            raise ValueError(f"{where}: kind must be one of {', '.join(KINDS)}, not {rule['kind']!r}")
        found["kind"] = rule["kind"]
    if "fields" in rule:
        names = rule["fields"]
        if isinstance(names, str) or not isinstance(names, (list, tuple)):
            raise TypeError(f"{where}: fields must be a list of field names, not {type(names).__name__}")
        for name in names:
            if not isinstance(name, str):
                raise TypeError(f"{where}: fields must hold strings, not {type(name).__name__}")
        found["fields"] = frozenset(names)
    if "values" in rule:
        values = rule["values"]
        if action != "accept":
            raise ValueError(f"{where}: values is given with action {action!r}; only accept takes values")
        if not isinstance(values, Mapping):
            raise TypeError(f"{where}: values must be a mapping of field names to values")
        for name, value in values.items():
            if not isinstance(name, str):
                raise TypeError(f"{where}: values keys must be field names (strings)")
            _check_value(where, name, value)
        found["values"] = dict(values)
    if "allow_secrets" in rule:
        if not isinstance(rule["allow_secrets"], bool):
            raise TypeError(f"{where}: allow_secrets must be true or false")
        found["allow_secrets"] = rule["allow_secrets"]
    kind = found.get("kind")
    if "url_host" in found and kind == "input":
        raise ValueError(f"{where}: url_host matches URL requests, but kind is 'input'")
    if ("fields" in found or "values" in found) and kind == "authorization":
        raise ValueError(f"{where}: fields and values are for forms, but kind is 'authorization'")
    if "url_host" in found and ("fields" in found or "values" in found):
        raise ValueError(f"{where}: url_host matches URL requests, which have no fields or values")
    return Rule(**found)

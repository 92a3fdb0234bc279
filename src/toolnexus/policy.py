"""A resolver for hosts with no human at hand: answers from ordered rules.

```python
from toolnexus.policy import Policy

policy = Policy(
    [
        {"prompt": "(?i)deploy", "fields": ["region", "replicas"], "action": "accept",
         "values": {"region": "eu-west-1"}},
        {"kind": "authorization", "url_host": "auth.example.com", "action": "accept"},
        {"prompt": "(?i)delete", "action": "decline"},
    ],
    server="deployer",
)
```

Importing it costs nothing beyond ``toolnexus`` itself.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ._answering import fill
from ._rules import Asked, Rule, read_rule
from ._util import is_async_callable
from ._wire import Answer, AnswerLike, Request
from .forms import sensitive_fields

if TYPE_CHECKING:
    from ._callback import WaitFor

__all__ = ["Policy"]

logger = logging.getLogger(__name__)

RULE_KEYS = ("server", "prompt", "fields", "kind", "url_host", "action", "values", "allow_secrets")
"""Every key a rule may have."""
ACTIONS = ("accept", "decline", "cancel", "ask")
"""Every action a rule may take."""


class Policy:
    """A resolver that answers from ordered rules, for a host with no human at hand.

    A rule is a mapping. What it matches, every key optional (a rule with none matches
    every request):

    - ``server``: the name of the server that asks, as the host knows it (the policy's
      ``server``); a rule naming a server never matches a policy that has none.
    - ``prompt``: a regular expression (Python's ``re``, written by you, the host), searched
      in the prompt: ``"(?i)deploy"``, ``"^Sign in to"``.
    - ``fields``: the form's field names, all of them, in any order.
    - ``kind``: ``"input"`` (a form) or ``"authorization"`` (a URL to visit).
    - ``url_host``: the URL's exact host (``"auth.example.com"``, no subdomains, compared
      without case).

    What it does, ``action``:

    - ``"accept"``: for a form, ``values`` (a mapping of field names to values) laid over
      the form's defaults; when the result does not fit the form, the server gets cancel
      and a warning on the ``toolnexus.policy`` logger names the fields (not the values).
      A URL request is accepted only by a rule whose ``url_host`` is the URL's exact host,
      and a form that seems to ask for a secret ([`sensitive_fields`][toolnexus.forms.sensitive_fields])
      only by a rule with ``allow_secrets: true``: an accept rule that may not accept a
      request does not match it, and the next rule is tried.
    - ``"decline"``: the user said no; ``"cancel"``: nobody answered.
    - ``"ask"``: hand the request to ``fallback`` (a [`ConsoleResolver`][toolnexus.console.ConsoleResolver],
      say); cancel, with a warning, when there is none.

    The first rule that matches wins. A request that no rule matches gets **cancel**,
    never decline: nobody refused anything, and a server may take a decline as the user's
    final word.

    The policy is a plain resolver, ``elicitation_callback(policy)``, and
    [`acall`][toolnexus.policy.Policy.acall] is its ``async`` twin (for an ``async``
    fallback). [`decide`][toolnexus.policy.Policy.decide] tells what the rules say without
    asking anyone.

    Args:
        rules: the rules, in order.
        server: the name of the server this policy answers for, which ``server`` rules
            match; see [`for_server`][toolnexus.policy.Policy.for_server].
        fallback: the resolver ``ask`` hands a request to.

    Raises ``TypeError``/``ValueError`` naming the rule (its 0-based index) and the key for
    a rule that can be known to be wrong now: an unknown key, an action that is not one of
    the four, a ``prompt`` that is not a valid regular expression, ``values`` that are not
    a mapping of JSON values or come with another action than accept.
    """

    def __init__(
        self,
        rules: Iterable[Mapping[str, Any]],
        *,
        server: str | None = None,
        fallback: WaitFor | None = None,
    ) -> None:
        if isinstance(rules, (str, bytes, Mapping)) or not isinstance(rules, Iterable):
            raise TypeError(f"Policy: rules must be a list of mappings, not {type(rules).__name__}")
        if server is not None and not isinstance(server, str):
            raise TypeError(f"Policy: server must be a str or None, not {type(server).__name__}")
        if fallback is not None and not callable(fallback):
            raise TypeError(f"Policy: fallback must be callable or None, not {type(fallback).__name__}")
        self.rules: tuple[Rule, ...] = tuple(
            read_rule(index, rule, what="rule", keys=RULE_KEYS, actions=ACTIONS, regex=True)
            for index, rule in enumerate(rules)
        )
        self.server = server
        self.fallback = fallback

    @classmethod
    def from_file(
        cls,
        path: str | PathLike[str],
        *,
        server: str | None = None,
        fallback: WaitFor | None = None,
    ) -> Policy:
        """Read ``{"rules": [...]}`` from a JSON file (``.json``) or a TOML file (``.toml``,
        with Python 3.11 or later, whose standard library reads TOML).

        Errors are raised as for the constructor, the file's path in front.
        """
        file = Path(path)
        suffix = file.suffix.lower()
        if suffix not in (".json", ".toml"):
            raise ValueError(f"{file}: a policy file is .json or .toml, not {suffix or 'without a suffix'}")
        text = file.read_text(encoding="utf-8")
        if suffix == ".json":
            try:
                loaded = json.loads(text)
            except RecursionError:
                raise ValueError(f"{file}: nested too deeply to be a policy file") from None
            except json.JSONDecodeError as err:
                raise ValueError(f"{file}: not valid JSON: {err.msg} at line {err.lineno}") from None
        else:
            loaded = _load_toml(file, text)
        if not isinstance(loaded, Mapping) or "rules" not in loaded:
            raise ValueError(f'{file}: a policy file holds {{"rules": [...]}}')
        extra = [str(key) for key in loaded if key != "rules"]
        if extra:
            raise ValueError(f"{file}: unknown key {extra[0]!r} (a policy file holds only rules)")
        try:
            return cls(loaded["rules"], server=server, fallback=fallback)
        except TypeError as err:
            raise TypeError(f"{file}: {err}") from None
        except ValueError as err:
            raise ValueError(f"{file}: {err}") from None

    def for_server(self, name: str) -> Policy:
        """The same rules and fallback, answering for the server called ``name``."""
        if not isinstance(name, str):
            raise TypeError(f"Policy.for_server: name must be a str, not {type(name).__name__}")
        policy = Policy((), server=name, fallback=self.fallback)
        policy.rules = self.rules
        return policy

    def __repr__(self) -> str:
        return f"Policy({len(self.rules)} rules, server={self.server!r})"

    def decide(self, request: Request) -> tuple[int | None, Answer | None]:
        """What the rules say about ``request``, without asking anyone.

        Returns the index of the rule that decided (``None`` when no rule matches) and the
        answer, or ``None`` for a rule that says ``ask`` when there is a fallback to ask.
        """
        if not isinstance(request, Request):
            raise TypeError(f"Policy expects a Request, not {type(request).__name__}")
        asked = Asked(request)
        for rule in self.rules:
            if rule.mismatch(asked, self.server) is not None or not _may_accept(rule, asked):
                continue
            if rule.action == "ask":
                if self.fallback is not None:
                    return rule.index, None
                logger.warning(
                    "elicitation %s: rule %d says ask, but the policy has no fallback; cancel sent",
                    request.id,
                    rule.index,
                )
                return rule.index, Answer.cancel(request)
            if rule.action == "accept" and request.kind == "input":
                content = _fitted(rule, asked)
                if content is None:
                    return rule.index, Answer.cancel(request)
                return rule.index, rule.answer(request, content)
            return rule.index, rule.answer(request)
        logger.info("elicitation %s: no rule matches; cancel sent", request.id)
        return None, Answer.cancel(request)

    def __call__(self, request: Request) -> AnswerLike:
        """Answer ``request`` by the first rule that matches it (cancel when none does).

        A plain resolver: the bridge runs it in a worker thread, so a blocking fallback
        (the terminal) blocks no event loop. With an ``async`` fallback, use
        [`acall`][toolnexus.policy.Policy.acall]; this raises ``TypeError`` when it would
        have to ask one.
        """
        _, answer = self.decide(request)
        if answer is not None:
            return answer
        fallback = self.fallback
        if is_async_callable(fallback):
            raise TypeError("Policy: the fallback is async; hand policy.acall to the bridge instead")
        return cast("Callable[[Request], AnswerLike]", fallback)(request)

    async def acall(self, request: Request) -> AnswerLike:
        """The same as calling it, as an ``async def`` resolver: an ``async`` fallback is
        awaited, a plain one runs in a worker thread."""
        _, answer = self.decide(request)
        if answer is not None:
            return answer
        fallback = self.fallback
        assert fallback is not None  # decide() answers itself when there is none
        if is_async_callable(fallback):
            return await cast("Callable[[Request], Awaitable[AnswerLike]]", fallback)(request)
        import anyio.to_thread

        result = await anyio.to_thread.run_sync(fallback, request)
        return cast("AnswerLike", result)


def _load_toml(file: Path, text: str) -> Any:
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(text)
        except RecursionError:
            raise ValueError(f"{file}: nested too deeply to be a policy file") from None
        except tomllib.TOMLDecodeError as err:
            raise ValueError(f"{file}: not valid TOML: {err}") from None
    raise ValueError(f"{file}: TOML policy files need Python 3.11 or later (tomllib); use JSON")


def _may_accept(rule: Rule, asked: Asked) -> bool:
    """Whether an accept rule may accept this request: a URL only with its exact host, a
    form that seems to ask for a secret only with ``allow_secrets``."""
    if rule.action != "accept":
        return True
    kind = asked.request.kind
    if kind == "authorization":
        return rule.url_host is not None  # mismatch() has checked it is the URL's host
    if kind == "input" and not rule.allow_secrets and asked.form is not None:
        return not sensitive_fields(asked.form)
    return True


def _fitted(rule: Rule, asked: Asked) -> dict[str, Any] | None:
    """The rule's values laid over the form's defaults, in the form's order, or ``None``
    (logged, naming the fields, never a value) when that does not fit the form."""
    request, form = asked.request, asked.form
    if form is None:
        logger.warning(
            "elicitation %s: rule %d: the form cannot be read; cancel sent", request.id, rule.index
        )
        return None
    filled = fill(form, rule.values or {})
    problems = form.problems(filled)
    if problems:
        logger.warning(
            "elicitation %s: rule %d: the values do not fit the form (%s); cancel sent",
            request.id,
            rule.index,
            "; ".join(problems),
        )
        return None
    return filled

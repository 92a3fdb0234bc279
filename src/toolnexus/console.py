"""A ready §10 resolver for terminal hosts: :class:`ConsoleResolver`.

It answers the questions an MCP server asks (forms and URLs, through
:func:`toolnexus.mcp.elicitation_callback`) at the terminal, and honours the client duties
of the MCP elicitation spec: it says which server asks, offers decline and cancel at every
prompt, lets the user review and edit a form before it is sent, warns when a form asks for
a secret, and shows a URL in full with its host before asking for consent to open it. It
never fetches a URL itself.

::

    from mcp import Client
    from toolnexus.console import ConsoleResolver
    from toolnexus.mcp import elicitation_callback

    async with Client(server, elicitation_callback=elicitation_callback(ConsoleResolver("my-server"))) as c:
        ...
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any, TextIO
from urllib.parse import urlsplit

from ._sensitive import sensitive_fields
from ._wire import Answer, Request

__all__ = ["ConsoleResolver", "url_warnings"]

_YES_NO = {"y": "y", "yes": "y", "n": "n", "no": "n"}
_TRUE = frozenset({"y", "yes", "true", "t", "1", "on"})
_FALSE = frozenset({"n", "no", "false", "f", "0", "off"})
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


class _DeclinedError(Exception):
    """The user declined (``:decline``, ``n``)."""


class _CancelledError(Exception):
    """The user cancelled (``:cancel``, end of input, Ctrl-C, too many wrong answers)."""


def _clean(text: str) -> str:
    """Server text made safe to print: control characters (terminal escapes) shown escaped."""
    out = []
    for ch in text:
        if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf"):
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "".join(out)


def _is_local(host: str) -> bool:
    return host in _LOCAL_HOSTS or host.endswith(".localhost") or host.startswith("127.")


def url_warnings(url: str) -> list[str]:
    """What is suspicious about a URL a server asks the user to open, one sentence each.

    Warns when the scheme is not ``https`` (``http`` to ``localhost`` or a loopback
    address excepted), when the host is punycode (``xn--``) or not ASCII (it may imitate
    another name), when the URL carries a user name or password (``https://bank.com@evil.example``
    goes to ``evil.example``), when it has no host, and when it cannot be parsed. An empty
    list when nothing is suspicious. Nothing is fetched.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        _ = parts.port  # raises ValueError for a port that is not a number
    except ValueError:
        return ["the URL cannot be parsed: do not open it"]
    warnings: list[str] = []
    scheme = parts.scheme.lower()
    if scheme == "http":
        if not _is_local(host):
            warnings.append("the URL is not https: what you send there can be read or changed on the way")
    elif scheme != "https":
        warnings.append(f"the URL's scheme is {_clean(scheme)!r}, not https: it may not be a web page at all")
    if not host:
        warnings.append("the URL has no host")
    elif not host.isascii():
        warnings.append("the host has characters that are not ASCII: it may imitate another name")
    elif any(label.startswith("xn--") for label in host.split(".")):
        try:
            decoded = host.encode("ascii").decode("idna")
        except UnicodeError:
            decoded = ""
        shown = f" (it reads as {_clean(decoded)!r})" if decoded and decoded != host else ""
        warnings.append(f"the host is punycode{shown}: it may imitate another name")
    if parts.username is not None or parts.password is not None:
        warnings.append(
            "the URL carries a user name or password before '@': the real host is the one shown above"
        )
    return warnings


def _auto_colour(stream: TextIO) -> bool:
    if "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _fmt_number(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _options(prop: Mapping[str, Any]) -> list[tuple[Any, str | None]]:
    """The choices of a single select: ``(value, title or None)`` in order."""
    enum = prop.get("enum")
    if isinstance(enum, list):
        names = prop.get("enumNames")
        if isinstance(names, list) and len(names) == len(enum):
            return [(v, str(n)) for v, n in zip(enum, names, strict=True)]
        return [(v, None) for v in enum]
    for key in ("oneOf", "anyOf"):
        branches = prop.get(key)
        if isinstance(branches, list):
            out: list[tuple[Any, str | None]] = []
            for branch in branches:
                if isinstance(branch, Mapping) and "const" in branch:
                    title = branch.get("title")
                    out.append((branch["const"], str(title) if title is not None else None))
            return out
    return []


def _multi_options(prop: Mapping[str, Any]) -> list[tuple[Any, str | None]] | None:
    """The choices of a multi-select (``type: array``), or ``None`` when it is not one."""
    if prop.get("type") != "array":
        return None
    items = prop.get("items")
    return _options(items) if isinstance(items, Mapping) else []


def _pick(text: str, options: list[tuple[Any, str | None]]) -> Any:
    """One choice by value, by 1-based number, or by value or title ignoring case.

    Returns ``text`` itself when nothing matches, for the validator to reject.
    """
    for value, _ in options:
        if str(value) == text:
            return value
    if text.isdigit() and 1 <= int(text) <= len(options):
        return options[int(text) - 1][0]
    folded = text.casefold()
    hits = [v for v, title in options if str(v).casefold() == folded or (title or "").casefold() == folded]
    return hits[0] if len(hits) == 1 else text


def _parse(text: str, prop: Mapping[str, Any]) -> Any:
    """The typed value for what the user typed; the text itself when it does not parse,
    so that :func:`validate_content` reports the problem in its words."""
    multi = _multi_options(prop)
    if multi is not None:
        parts = [p.strip() for p in text.split(",")]
        return [_pick(p, multi) for p in parts if p]
    options = _options(prop)
    if options:
        return _pick(text, options)
    kind = prop.get("type")
    if kind == "boolean":
        folded = text.casefold()
        if folded in _TRUE:
            return True
        if folded in _FALSE:
            return False
        return text
    if kind in ("integer", "number"):
        try:
            return int(text)
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError:
            return text
        if not math.isfinite(number):
            return text
        if kind == "integer" and number.is_integer():
            return int(number)
        return number
    return text


class ConsoleResolver:
    """A §10 resolver that asks at the terminal: ``resolver(request) -> Answer``.

    A plain (blocking) callable: give it to :func:`toolnexus.mcp.elicitation_callback`,
    which runs it in a worker thread, or call it yourself.

    - ``kind="input"`` (an MCP form): each property of ``data["schema"]`` is asked in the
      schema's order, with its title, description, type, bounds and default. Enter takes
      the default (an optional field with no default stays empty); enums are answered by
      value or 1-based number, booleans with y/n, multi-selects with comma-separated
      values or numbers. Each answer is checked with
      :func:`toolnexus.mcp.validate_content` and asked again when wrong, at most
      ``attempts`` times, then the request is cancelled. A review of all values follows:
      ``Send? [Y/n/e]``: Enter or ``y`` sends, ``n`` declines, ``e`` asks the form again
      with the current answers as defaults. A form that seems to ask for a secret (see
      :func:`toolnexus.mcp.sensitive_fields`) is preceded by a warning and
      ``Continue anyway? [y/N]``; such a field is then read without echo at a terminal
      and shown as ``***``.
    - ``kind="authorization"`` (an MCP URL): the full URL and, on its own line, the host
      (highlighted when there is colour), the warnings of :func:`url_warnings`, then
      ``Open this URL in your browser? [y/N]``. ``y`` opens it with :mod:`webbrowser`
      (or prints it to open by hand when no browser can be opened or ``open_browser`` is
      false) and answers ok; ``n`` or Enter declines.
    - Any other kind: the prompt and ``[y/N]``.

    ``:decline`` or ``:cancel`` at any prompt declines or cancels the whole request; end of
    input and Ctrl-C cancel it (Ctrl-C reaches only a resolver running in the main thread).
    Requests that arrive at once (parallel tool calls) are asked one after the other, never
    interleaved.

    When ``stdin`` is not a terminal, one line is read per question in exactly the order
    above and echoed, so a session can be scripted: for a form of (an enum, an integer, a
    boolean with a default), ``production``, ``3``, an empty line and an empty line answer
    the three fields and send at the review.

    Args:
        server_name: the server that asks, named in every header.
        stdin: where answers are read (default :data:`sys.stdin`).
        stdout: where questions are written (default :data:`sys.stdout`).
        open_browser: open an accepted URL with :mod:`webbrowser`; if false, print it.
        colour: use ANSI colour; ``None`` decides by whether ``stdout`` is a terminal
            (and ``NO_COLOR`` is unset).
        attempts: how many times a field is asked before the request is cancelled.
    """

    def __init__(
        self,
        server_name: str | None = None,
        *,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        open_browser: bool = True,
        colour: bool | None = None,
        attempts: int = 3,
    ) -> None:
        if server_name is not None and not isinstance(server_name, str):
            kind = type(server_name).__name__
            raise TypeError(f"ConsoleResolver: server_name must be a str or None, not {kind}")
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise ValueError(f"ConsoleResolver: attempts must be a positive int, not {attempts!r}")
        self.server_name = server_name
        """The server named in each header; ``None`` says "The MCP server"."""
        self._in = sys.stdin if stdin is None else stdin
        self._out = sys.stdout if stdout is None else stdout
        self.open_browser = open_browser
        """Whether an accepted URL is opened with :mod:`webbrowser`."""
        self.colour = _auto_colour(self._out) if colour is None else colour
        """Whether ANSI colour is used."""
        self.attempts = attempts
        """How many times a field is asked before the request is cancelled."""
        self._interactive = _isatty(self._in)
        # One question at a time: parallel tool calls may ask at once, from several threads.
        self._turn = threading.Lock()
        # On the process's own terminal, the built-in input() (with line editing when the
        # host has loaded readline); on other streams, their own read and write.
        self._use_input = self._interactive and stdin is None and stdout is None

    # --- output --------------------------------------------------------------------------

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour else text

    def _say(self, text: str = "") -> None:
        self._out.write(text + "\n")
        self._out.flush()

    def _warn(self, text: str) -> None:
        self._say(self._style(f"  ! {text}", "33"))

    # --- input ---------------------------------------------------------------------------

    def _read(self, prompt: str, *, secret: bool = False) -> str:
        """One answer, stripped. ``:decline``/``:cancel``, end of input and Ctrl-C raise.

        A ``secret`` answer is read without echo at a terminal and echoed as ``***`` in a
        script.
        """
        try:
            with self._no_echo(secret and self._interactive):
                if self._use_input and not secret:  # readline would redisplay a secret
                    line: str | None = input(prompt)
                else:
                    self._out.write(prompt)
                    self._out.flush()
                    raw = self._in.readline()
                    line = raw if raw else None
            if line is not None and not self._interactive:
                self._out.write(("***" if secret and line.strip() else line.rstrip("\r\n")) + "\n")
                self._out.flush()
        except EOFError:
            line = None
        except KeyboardInterrupt:
            self._say()
            raise _CancelledError from None
        if line is None:
            self._say("(end of input)" if not self._interactive else "")
            raise _CancelledError
        text = line.strip()
        if text == ":decline":
            raise _DeclinedError
        if text == ":cancel":
            raise _CancelledError
        return text

    @contextlib.contextmanager
    def _no_echo(self, active: bool) -> Iterator[None]:
        """Turn the terminal's echo off for the duration (as :mod:`getpass` does)."""
        if not active:
            yield
            return
        try:
            import termios
        except ImportError:  # Windows: echo stays
            yield
            return
        try:
            fd = self._in.fileno()
            saved = termios.tcgetattr(fd)
        except (AttributeError, ValueError, OSError, termios.error):  # not a real terminal
            yield
            return
        quiet = list(saved)
        quiet[3] &= ~termios.ECHO
        termios.tcsetattr(fd, termios.TCSADRAIN, quiet)
        try:
            yield
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
            self._say()  # the Enter the user typed was not echoed either

    def _yes_no(self, prompt: str) -> bool:
        """A ``[y/N]`` question: ``True`` for y or yes; Enter, n or no is ``False``."""
        return self._choose(prompt, _YES_NO, "n", "answer y or n") == "y"

    def _choose(self, prompt: str, choices: Mapping[str, str], default: str, hint: str) -> str:
        """Ask until the answer is one of ``choices`` (lower-cased words to results)."""
        for _ in range(self.attempts):
            text = self._read(prompt).casefold()
            if not text:
                return default
            if text in choices:
                return choices[text]
            self._warn(hint)
        raise self._too_many()

    def _too_many(self) -> _CancelledError:
        self._warn(f"no valid answer after {self.attempts} tries")
        return _CancelledError()

    # --- the resolver --------------------------------------------------------------------

    def __call__(self, request: Request) -> Answer:
        """Ask the user at the terminal and return their :class:`Answer`.

        The answer echoes ``request.id``. ``ok=True`` carries the form's values (``data``)
        for ``"input"``; ``ok=False`` carries ``reason="declined"`` or ``"cancelled"``.
        """
        if not isinstance(request, Request):
            raise TypeError(f"ConsoleResolver expects a Request, not {type(request).__name__}")
        with self._turn:
            return self._ask(request)

    def _ask(self, request: Request) -> Answer:
        who = _clean(self.server_name) if self.server_name else "The MCP server"
        self._say()
        self._say(self._style(f"── {who} asks ──", "1"))
        if request.prompt:
            self._say(_clean(request.prompt))
        self._say(self._style("(answer :decline or :cancel at any prompt to refuse)", "2"))
        try:
            if request.kind == "input":
                data = self._form(request)
                self._say(self._style("→ sent", "32"))
                return Answer(request.id, True, data)
            if request.kind == "authorization":
                self._url(request)
            else:
                self._confirm()
            self._say(self._style("→ accepted", "32"))
            return Answer(request.id, True)
        except _DeclinedError:
            self._say(self._style("→ declined", "33"))
            return Answer(request.id, False, None, "declined")
        except _CancelledError:
            self._say(self._style("→ cancelled", "33"))
            return Answer(request.id, False, None, "cancelled")

    def _confirm(self) -> None:
        if not self._yes_no("Accept? [y/N] "):
            raise _DeclinedError

    # --- URL mode ------------------------------------------------------------------------

    def _url(self, request: Request) -> None:
        url = request.url
        if not url:
            self._warn("the server gave no URL to open")
            raise _DeclinedError
        self._say(f"  URL:  {_clean(url)}")
        try:
            parts = urlsplit(url)
            host = parts.hostname or ""
            port = parts.port
        except ValueError:
            host, port = "", None
        shown = _clean(host) + (f":{port}" if port is not None else "")
        self._say(f"  Host: {self._style(shown or '(none)', '1;4;36')}")
        for warning in url_warnings(url):
            self._warn(warning)
        if not self._yes_no("Open this URL in your browser? [y/N] "):
            raise _DeclinedError
        opened = False
        if self.open_browser:
            import webbrowser

            try:
                opened = webbrowser.open(url)
            except webbrowser.Error:
                opened = False
        if opened:
            self._say("Opened in your browser.")
        else:
            self._say(f"Open this URL by hand: {_clean(url)}")

    # --- form mode -----------------------------------------------------------------------

    def _form(self, request: Request) -> dict[str, Any]:
        schema = request.data.get("schema") if request.data else None
        if not isinstance(schema, Mapping):
            schema = {}
        raw_props = schema.get("properties")
        props: Mapping[str, Any] = raw_props if isinstance(raw_props, Mapping) else {}
        raw_required = schema.get("required")
        required = set(raw_required) if isinstance(raw_required, list) else set()
        secret_names = sensitive_fields(schema)
        secrets = set(secret_names)
        if secrets:
            names = ", ".join(repr(name) for name in secret_names)
            self._warn(
                f"this form seems to ask for a secret ({names}). The MCP spec forbids servers to ask for "
                "passwords, API keys, tokens or payment details in a form."
            )
            if not self._yes_no("Continue anyway? [y/N] "):
                raise _DeclinedError
        values: dict[str, Any] = {}
        while True:
            current = values
            values = {}
            for name, prop in props.items():
                spec = prop if isinstance(prop, Mapping) else {}
                default = current[name] if name in current else spec.get("default")
                value = self._field(name, spec, name in required, default, secret=name in secrets)
                if value is not _EMPTY:
                    values[name] = value
            self._say("Review:")
            if not props:
                self._say("  (no fields)")
            for name, prop in props.items():
                spec = prop if isinstance(prop, Mapping) else {}
                label = _clean(str(spec.get("title") or name))
                if name not in values:
                    shown = "(empty)"
                elif name in secrets:
                    shown = "***"
                else:
                    shown = _clean(_show(values[name]))
                self._say(f"  {label}: {shown}")
            choice = self._choose(
                "Send? [Y/n/e] ",
                {**_YES_NO, "e": "e", "edit": "e"},
                "y",
                "answer y to send, n to decline or e to edit",
            )
            if choice == "y":
                return values
            if choice == "n":
                raise _DeclinedError
            self._say("Edit: Enter keeps the value in brackets.")

    def _field(
        self, name: str, prop: Mapping[str, Any], required: bool, default: Any, *, secret: bool
    ) -> Any:
        from ._schema import validate_content

        self._say()
        title = prop.get("title")
        heading = _clean(str(title)) if title else _clean(name)
        if title and title != name:
            heading += f" ({_clean(name)})"
        self._say(self._style(heading, "1"))
        description = prop.get("description")
        if isinstance(description, str) and description:
            self._say(f"  {_clean(description)}")
        self._say(f"  {_describe(prop)}{'' if required else ' · optional'}")
        has_default = default is not None
        shown = "***" if secret and has_default else _show(default) if has_default else ""
        if prop.get("type") == "boolean" and isinstance(default, bool):
            hint = " [Y/n]" if default else " [y/N]"
        elif prop.get("type") == "boolean":
            hint = " [y/n]"
        else:
            hint = f" [{_clean(shown)}]" if has_default else ""
        sub_schema: dict[str, Any] = {"type": "object", "properties": {name: dict(prop)}}
        if required:
            sub_schema["required"] = [name]
        for _ in range(self.attempts):
            text = self._read(f"{_clean(name)}{hint}: ", secret=secret)
            if not text:
                if has_default:
                    return default
                if not required:
                    return _EMPTY
            value = _parse(text, prop) if text else _EMPTY
            content = {} if value is _EMPTY else {name: value}
            try:
                problems = validate_content(sub_schema, content)
            except ValueError:
                problems = []  # the server's schema is not one a validator takes: trust the answer
            if not problems:
                return value
            for problem in problems:
                self._warn(problem)
        raise self._too_many()


class _Empty:
    def __repr__(self) -> str:
        return "<empty>"


_EMPTY: Any = _Empty()


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "y" if value else "n"
    if isinstance(value, list):
        return ", ".join(_show(v) for v in value)
    if isinstance(value, float):
        return _fmt_number(value)
    return str(value)


def _bounds(low: object, high: object, unit: str = "") -> str:
    lo = _fmt_number(low) if isinstance(low, (int, float)) and not isinstance(low, bool) else None
    hi = _fmt_number(high) if isinstance(high, (int, float)) and not isinstance(high, bool) else None
    if lo is not None and hi is not None:
        return f" from {lo} to {hi}{unit}"
    if lo is not None:
        return f" of at least {lo}{unit}"
    if hi is not None:
        return f" of at most {hi}{unit}"
    return ""


def _choices_text(options: list[tuple[Any, str | None]]) -> str:
    shown = []
    for i, (value, title) in enumerate(options, 1):
        label = _clean(str(value))
        if title and title != str(value):
            label += f" ({_clean(title)})"
        shown.append(f"{i}) {label}")
    return "  ".join(shown)


def _describe(prop: Mapping[str, Any]) -> str:
    """The type and bounds of a field, in words."""
    multi = _multi_options(prop)
    if multi is not None:
        count = _bounds(prop.get("minItems"), prop.get("maxItems")).replace(" of ", " ")
        return f"choose{count or ' any'} of: {_choices_text(multi)} (comma-separated values or numbers)"
    options = _options(prop)
    if options:
        return f"one of: {_choices_text(options)} (value or number)"
    kind = prop.get("type")
    if kind == "boolean":
        return "yes or no"
    if kind == "integer":
        return "a whole number" + _bounds(prop.get("minimum"), prop.get("maximum"))
    if kind == "number":
        return "a number" + _bounds(prop.get("minimum"), prop.get("maximum"))
    from ._schema import FORMAT_WORDS

    fmt = prop.get("format")
    text = FORMAT_WORDS.get(fmt, "text") if isinstance(fmt, str) else "text"
    length = _bounds(prop.get("minLength"), prop.get("maxLength"), " characters")
    return text + (f", length{length.replace(' of ', ' ')}" if length else "")

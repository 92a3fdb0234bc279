"""A ready §10 resolver for terminal hosts: ``ConsoleResolver``.

It answers the questions an MCP server asks (forms and URLs, through
``elicitation_callback``) at the terminal, and honours the client duties of the MCP
elicitation spec: it says which server asks, offers decline and cancel at every
prompt, lets the user review and edit a form before it is sent, warns when a form asks for
a secret, and shows a URL in full with its host before asking for consent to open it. It
never fetches a URL itself. For example::

    from mcp import Client
    from toolnexus.console import ConsoleResolver
    from toolnexus.mcp import elicitation_callback

    async with Client(server, elicitation_callback=elicitation_callback(ConsoleResolver("my-server"))) as c:
        ...
"""

from __future__ import annotations

import contextlib
import ipaddress
import math
import os
import re
import sys
import threading
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any, TextIO
from urllib.parse import SplitResult, unquote, urlsplit

from ._sensitive import sensitive_fields
from ._wire import Answer, Request

__all__ = ["ConsoleResolver", "url_warnings"]

_YES_NO = {"y": "y", "yes": "y", "n": "n", "no": "n"}
_TRUE = frozenset({"y", "yes", "true", "t", "1", "on"})
_FALSE = frozenset({"n", "no", "false", "f", "0", "off"})
_ASKABLE_TYPES = frozenset({"string", "number", "integer", "boolean"})
_CHOICE_KEYS = ("enum", "oneOf", "anyOf")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
# What browsers strip around a URL and remove inside it (WHATWG URL standard).
_C0_AND_SPACE = "".join(chr(c) for c in range(0x21))
_TAB_OR_NEWLINE = re.compile(r"[\t\n\r]")
_OPENABLE = frozenset({"http", "https"})


class _DeclinedError(Exception):
    """The user declined (``:decline``, ``n``)."""


class _CancelledError(Exception):
    """The user cancelled (``:cancel``, end of input, Ctrl-C, too many wrong answers)."""


def _clean(text: str, *, lines: bool = False) -> str:
    """Server text made safe to print: control characters (terminal escapes) shown escaped.

    Line breaks and tabs are kept only with ``lines`` (a prompt or a description); in a
    one-line item (a name, a value, a URL, a warning) they could fake the next line.
    """
    out = []
    for ch in text:
        if (lines and ch in "\n\t") or unicodedata.category(ch) not in ("Cc", "Cf"):
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "".join(out)


def _is_local(host: str) -> bool:
    """A loopback address (``127.0.0.0/8``, ``::1``) or a ``localhost`` name."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost" or host.endswith(".localhost")


def _as_browser_reads(url: str) -> tuple[str, list[str]]:
    """The URL as a browser reads it, and what it changed, for an ``http(s)`` URL.

    The WHATWG URL standard that browsers follow strips leading and trailing control
    characters and spaces, removes every tab and line break, and in an http(s) URL reads
    ``\\`` as ``/`` and any run of slashes after the scheme as ``//``: so
    ``https://evil.example\\@bank.example/`` goes to ``evil.example``, though
    ``urllib.parse.urlsplit`` reads ``bank.example``. Other URLs are returned as they are.
    """
    stripped = url.strip(_C0_AND_SPACE)
    cleaned = _TAB_OR_NEWLINE.sub("", stripped)
    match = _SCHEME.match(cleaned)
    if match is None or match.group(1).lower() not in _OPENABLE:
        return url, []
    changes: list[str] = []
    if stripped != url:
        changes.append("spaces or control characters around it")
    if cleaned != stripped:
        changes.append("tabs or line breaks, which browsers remove")
    read = cleaned.replace("\\", "/")
    if read != cleaned:
        changes.append("a backslash, which browsers read as '/'")
    rest = read[match.end() :]
    if not rest.startswith("//") or rest.startswith("///"):
        changes.append("an unusual number of slashes after the scheme")
    return f"{match.group(1)}://{rest.lstrip('/')}", changes


def _browser_parts(url: str) -> tuple[SplitResult, str, list[str]]:
    """``url`` split as a browser would read it, its host (decoded), and what the browser
    reads differently from the text. Raises ``ValueError`` when it cannot be parsed."""
    read, changes = _as_browser_reads(url)
    parts = urlsplit(read)
    _ = parts.port  # raises ValueError for a port that is not a number
    return parts, unquote(parts.hostname or ""), changes


def _host_line(url: str) -> str:
    try:
        parts, host, _ = _browser_parts(url)
    except ValueError:
        return ""
    return _clean(host) + (f":{parts.port}" if parts.port is not None else "")


def _openable(url: str) -> bool:
    """Whether the console would open ``url``: ``http`` or ``https``, and it can be parsed."""
    try:
        parts, _, _ = _browser_parts(url)
    except ValueError:
        return False
    return parts.scheme.lower() in _OPENABLE


def url_warnings(url: str) -> list[str]:
    """What is suspicious about a URL a server asks the user to open, one sentence each.

    The URL is read as a browser reads it (``\\`` as ``/``, tabs and line breaks removed),
    and that is warned about too. Warns when the scheme is not ``https`` (``http`` to
    ``localhost`` or a loopback address excepted), when the host is punycode (``xn--``),
    percent-encoded or not ASCII (it may imitate another name), when the URL carries a
    user name or password (``https://bank.com@evil.example`` goes to ``evil.example``),
    when it has no host, and when it cannot be parsed. An empty list when nothing is
    suspicious. Nothing is fetched.
    """
    try:
        parts, host, changes = _browser_parts(url)
    except ValueError:
        return ["the URL cannot be parsed: do not open it"]
    warnings: list[str] = []
    if changes:
        warnings.append(
            f"the URL has {' and '.join(changes)}: a browser goes to the host shown above, "
            "which is not what the text seems to say"
        )
    scheme = parts.scheme.lower()
    if scheme == "http":
        if not _is_local(host):
            warnings.append("the URL is not https: what you send there can be read or changed on the way")
    elif not scheme:
        warnings.append("the URL has no scheme: it is not a web address")
    elif scheme != "https":
        warnings.append(f"the URL's scheme is {_clean(scheme)!r}, not https: it may not be a web page at all")
    if not host:
        warnings.append("the URL has no host")
    elif "%" in (parts.hostname or ""):
        warnings.append(
            f"the host is percent-encoded (it reads as {_clean(host)!r}): it may imitate another name"
        )
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


def _askable(prop: object) -> bool:
    """Whether the console can ask for this property: a string, number, integer or boolean,
    a single-select or a multi-select (of choices or of free text)."""
    if not isinstance(prop, Mapping):
        return False
    multi = _multi_options(prop)
    if multi is not None:
        items = prop.get("items")
        if not isinstance(items, Mapping):
            return False
        if any(key in items for key in _CHOICE_KEYS):
            return bool(multi)
        return items.get("type") == "string"
    if any(key in prop for key in _CHOICE_KEYS):
        return bool(_options(prop))
    kind = prop.get("type", "string")  # no type: free text
    return isinstance(kind, str) and kind in _ASKABLE_TYPES


def _out_of_range(text: str, prop: Mapping[str, Any]) -> str | None:
    """A hint when a choice is picked by a number that is not one of the choices."""
    multi = _multi_options(prop)
    options = multi if multi is not None else _options(prop)
    if not options:
        return None
    parts = [p.strip() for p in text.split(",")] if multi is not None else [text]
    count = len(options)
    for part in parts:
        if not part.isdigit() or 1 <= int(part) <= count:
            continue
        if not any(str(value) == part or title == part for value, title in options):
            return f"choose {'1' if count == 1 else f'1 to {count}'} or a value"
    return None


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
    so that [`validate_content`][toolnexus.mcp.validate_content] reports the problem in its words."""
    multi = _multi_options(prop)
    if multi is not None:
        picked: list[Any] = []
        for part in text.split(","):
            if part.strip():
                value = _pick(part.strip(), multi)
                if not any(type(v) is type(value) and v == value for v in picked):
                    picked.append(value)  # a repeated pick counts once
        return picked if picked else _EMPTY
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

    A plain (blocking) callable: give it to [`elicitation_callback`][toolnexus.mcp.elicitation_callback],
    which runs it in a worker thread, or call it yourself.

    - ``kind="input"`` (an MCP form): each property of ``data["schema"]`` is asked in the
      schema's order, with its title, description, type, bounds and default. Enter takes
      the default, checked like a typed answer (one that does not fit is refused, and
      Enter no longer takes it); an optional field with no default stays empty, and
      ``:clear`` empties an optional field. Enums are answered by value or 1-based number,
      booleans with y/n, multi-selects with comma-separated values or numbers (a repeated
      pick counts once). Each answer is checked with
      [`validate_content`][toolnexus.mcp.validate_content] and asked again when wrong, at most
      ``attempts`` times, then the request is cancelled. A review of all values follows:
      ``Send? [Y/n/e]``: Enter or ``y`` sends, ``n`` declines, ``e`` asks the form again
      with the current answers as defaults. A form that seems to ask for a secret (see
      [`sensitive_fields`][toolnexus.mcp.sensitive_fields]) is preceded by a warning and
      ``Continue anyway? [y/N]``; such a field is then read without echo at a terminal
      and shown as ``***``. A form the console cannot ask (a field that is not text, a
      number, yes/no or a choice; a schema that is not an object of fields) is cancelled
      with a warning before any question.
    - ``kind="authorization"`` (an MCP URL): the full URL and, on its own line, the host a
      browser will visit (highlighted when there is colour), the warnings of
      [`url_warnings`][toolnexus.console.url_warnings], then
      ``Open this URL in your browser? [y/N]``. ``y`` opens exactly that URL with
      ``webbrowser`` (or prints it to open by hand when no browser can be opened or
      ``open_browser`` is false) and answers ok; ``n`` or Enter
      declines. A URL that is not ``http`` or ``https`` is declined without the question.
    - Any other kind: the prompt and ``[y/N]``.

    ``:decline`` or ``:cancel`` at any prompt declines or cancels the whole request; end of
    input and Ctrl-C cancel it (Ctrl-C reaches only a resolver running in the main thread).
    A second Ctrl-C, or end of input at a terminal, also sets :attr:`quit_requested`.
    Requests that arrive at once (parallel tool calls) are asked one after the other, never
    interleaved.

    When ``stdin`` is not a terminal, one line is read per question in exactly the order
    above and echoed, so a session can be scripted: for a form of (an enum, an integer, a
    boolean with a default), ``production``, ``3``, an empty line and an empty line answer
    the three fields and send at the review.

    Args:
        server_name: the server that asks, named in every header.
        stdin: where answers are read (default ``sys.stdin``).
        stdout: where questions are written (default ``sys.stdout``).
        open_browser: open an accepted URL with ``webbrowser``; if false, print it.
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
        """Whether an accepted URL is opened with ``webbrowser``."""
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
        self._interrupts = 0
        self._quit = False

    @property
    def quit_requested(self) -> bool:
        """Whether the user asked to stop answering altogether: a second Ctrl-C at a prompt,
        or end of input (Ctrl-D) at a terminal. From then on every request is cancelled
        without a question; a host should stop (the ``toolnexus`` command exits 130)."""
        return self._quit

    # --- output --------------------------------------------------------------------------

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour else text

    def _say(self, text: str = "") -> None:
        self._out.write(text + "\n")
        self._out.flush()

    def _warn(self, text: str) -> None:
        """A warning line; it may quote the server (an enum value, a name), so it is cleaned."""
        self._say(self._style(f"  ! {_clean(text)}", "33"))

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
            self._interrupts += 1
            if self._interrupts > 1:
                self._quit = True
            else:
                self._say(self._style("(press Ctrl-C again to quit)", "2"))
            raise _CancelledError from None
        if line is None:
            self._say("(end of input)" if not self._interactive else "")
            # At a terminal, Ctrl-D means "stop"; from a pipe or a file, the script is over.
            self._quit = self._quit or self._interactive
            raise _CancelledError
        text = line.strip()
        if text == ":decline":
            raise _DeclinedError
        if text == ":cancel":
            raise _CancelledError
        return text

    @contextlib.contextmanager
    def _no_echo(self, active: bool) -> Iterator[None]:
        """Turn the terminal's echo off for the duration (as ``getpass`` does)."""
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
        self._warn(f"no valid answer after {self.attempts} {'try' if self.attempts == 1 else 'tries'}")
        return _CancelledError()

    # --- the resolver --------------------------------------------------------------------

    def __call__(self, request: Request) -> Answer:
        """Ask the user at the terminal and return their [`Answer`][toolnexus.Answer].

        The answer echoes ``request.id``. ``ok=True`` carries the form's values (``data``)
        for ``"input"``; ``ok=False`` carries ``reason="declined"`` or ``"cancelled"``.
        """
        if not isinstance(request, Request):
            raise TypeError(f"ConsoleResolver expects a Request, not {type(request).__name__}")
        with self._turn:
            if self._quit:
                return Answer(request.id, False, None, "cancelled")
            return self._ask(request)

    def _ask(self, request: Request) -> Answer:
        who = _clean(self.server_name) if self.server_name else "The MCP server"
        self._say()
        self._say(self._style(f"── {who} asks ──", "1"))
        if request.prompt:
            self._say(_clean(request.prompt, lines=True))
        hint = "answer :decline or :cancel at any prompt to refuse"
        if request.kind == "input":
            hint += "; :clear leaves an optional field empty"
        self._say(self._style(f"({hint})", "2"))
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
        # The host a browser will visit, which is not always the one the text seems to say.
        shown = _host_line(url)
        self._say(f"  Host: {self._style(shown or '(none)', '1;4;36')}")
        for warning in url_warnings(url):
            self._warn(warning)
        if not _openable(url):
            self._warn("this URL will not be opened: only http and https URLs are")
            raise _DeclinedError
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
        schema, problem = _form_schema(request.data)
        if problem is not None:
            self._warn(f"this form cannot be answered at a terminal: {problem}")
            raise _CancelledError
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
        editing = False
        while True:
            current = values
            values = {}
            for name, spec in props.items():
                # Editing, Enter keeps what was answered (an empty field stays empty).
                default = current.get(name) if editing else spec.get("default")
                value = self._field(name, spec, name in required, default, secret=name in secrets)
                if value is not _EMPTY:
                    values[name] = value
            self._say("Review:")
            if not props:
                self._say("  (no fields)")
            for name, spec in props.items():
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
            editing = True
            self._say("Edit: Enter keeps the value in brackets; :clear empties an optional field.")

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
            self._say(f"  {_clean(description, lines=True)}")
        self._say(f"  {_describe(prop)}{'' if required else ' · optional'}")
        boolean = prop.get("type") == "boolean"
        has_default = default is not None
        sub_schema: dict[str, Any] = {"type": "object", "properties": {name: dict(prop)}}
        if required:
            sub_schema["required"] = [name]
        for _ in range(self.attempts):
            hint = _default_hint(default if has_default else None, boolean=boolean, secret=secret)
            text = self._read(f"{_clean(name)}{hint}: ", secret=secret)
            if text == ":clear":
                if required:
                    self._warn(f"{name!r} is required: it cannot be left empty")
                    continue
                return _EMPTY
            if not text:
                if not has_default and not required:
                    return _EMPTY
                value = default if has_default else _EMPTY
            else:
                wrong = _wrong_words(text, prop)
                if wrong is not None:
                    self._warn(wrong)
                    continue
                value = _parse(text, prop)
            content = {} if value is _EMPTY else {name: value}
            try:
                problems = validate_content(sub_schema, content)
            except ValueError:
                problems = []  # the server's schema is not one a validator takes: trust the answer
            if not problems:
                return value
            for problem in problems:
                self._warn(problem)
            if not text and has_default:
                # The server's own default does not fit its schema: Enter no longer takes it.
                has_default = False
                rest = "" if required else ", or press Enter to leave the field empty"
                self._warn(f"the default does not fit: type a value{rest}")
        raise self._too_many()


def _form_schema(data: Mapping[str, Any] | None) -> tuple[Mapping[str, Any], str | None]:
    """The form's schema, and why the console cannot ask it (``None`` when it can).

    No data at all is a form without fields. A schema that is not an object of properties
    the console can ask (a string, a number, a boolean, a choice) cannot be answered here:
    asking would lead to questions without a valid answer, or to an empty accept.
    """
    if not data:
        return {}, None
    schema = data.get("schema")
    if not isinstance(schema, Mapping):
        return {}, "the request carries no schema of fields"
    if schema.get("type", "object") != "object":
        return {}, "its schema is not an object of fields"
    props = schema.get("properties", {})
    if not isinstance(props, Mapping):
        return {}, "its schema's properties are not a set of fields"
    unaskable = [str(name) for name, prop in props.items() if not _askable(prop)]
    if unaskable:
        names = ", ".join(repr(name) for name in unaskable)
        return (
            {},
            f"{names} {'is' if len(unaskable) == 1 else 'are'} not a text, number, yes/no or choice field",
        )
    required = schema.get("required")
    missing = [str(n) for n in required if n not in props] if isinstance(required, list) else []
    if missing:
        return {}, f"it requires {', '.join(repr(n) for n in missing)}, which it does not describe"
    return schema, None


def _default_hint(default: Any, *, boolean: bool, secret: bool) -> str:
    """What follows a field's name in its prompt: the default Enter takes, in brackets."""
    if boolean:
        if isinstance(default, bool):
            return " [Y/n]" if default else " [y/N]"
        return " [y/n]"
    if default is None:
        return ""
    return f" [{'***' if secret else _clean(_show(default))}]"


def _wrong_words(text: str, prop: Mapping[str, Any]) -> str | None:
    """The console's own hint for an answer in the wrong words, before the schema is asked:
    a yes/no answered otherwise, a choice picked by a number that is not offered."""
    if prop.get("type") == "boolean" and not _options(prop) and not isinstance(_parse(text, prop), bool):
        return "answer y or n"
    return _out_of_range(text, prop)


class _Empty:
    def __repr__(self) -> str:
        return "<empty>"


_EMPTY: Any = _Empty()


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
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
        if not multi:
            return f"a list of{count.replace(' from ', ' ')} texts (comma-separated)"
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

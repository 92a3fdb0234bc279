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

    callback = elicitation_callback(ConsoleResolver("my-server"))
    async with Client(server, elicitation_callback=callback) as c:
        ...
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, TextIO

from ._answering import form_of
from ._hints import count_hint, takes
from ._util import escape_text as _clean
from ._util import format_number, isatty
from ._wire import Answer, Request
from .errors import FormError, UrlError
from .forms import Field, Form, sensitive_fields
from .urls import browser_host, read_url
from .urls import url_warnings as warnings_for_url

if TYPE_CHECKING:
    from ._url_required import ElicitationCompletions

__all__ = ["QUIT_WINDOW", "ConsoleResolver"]

QUIT_WINDOW = 5.0
"""Seconds after a Ctrl-C at a prompt in which a second one quits; a later one counts as a
first again."""

_now = time.monotonic

_YES_NO = {"y": "y", "yes": "y", "n": "n", "no": "n"}
_TRUE = frozenset({"y", "yes", "true", "t", "1", "on"})
_FALSE = frozenset({"n", "no", "false", "f", "0", "off"})


class _DeclinedError(Exception):
    """The user declined (``:decline``, ``n``)."""


class _CancelledError(Exception):
    """The user cancelled (``:cancel``, end of input, Ctrl-C, too many wrong answers)."""


def _host_line(url: str) -> str:
    """The host (and port) a browser opens for ``url``, escaped for the terminal."""
    return _clean(browser_host(url))


def _openable(url: str) -> bool:
    """Whether the console would open ``url``: ``http`` or ``https``, and it can be parsed."""
    try:
        return read_url(url).scheme in ("http", "https")
    except UrlError:
        return False


def _auto_colour(stream: TextIO) -> bool:
    if "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb":
        return False
    return isatty(stream)


def _ordinal(text: str, count: int) -> int | None:
    """``text`` as a 1-based choice number when it is one in ASCII digits (``²`` is not),
    else ``None``; ``0`` when it is a number but not of a choice."""
    if not (text.isascii() and text.isdigit()):
        return None
    if len(text) > 6:
        return 0
    number = int(text)
    return number if 1 <= number <= count else 0


def _out_of_range(text: str, spec: Field) -> str | None:
    """A hint when a choice is picked by a number that is not one of the choices."""
    if not spec.choices:
        return None
    parts = [p.strip() for p in text.split(",")] if spec.type == "choices" else [text]
    count = len(spec.choices)
    for part in parts:
        if _ordinal(part, count) != 0:
            continue
        if not any(_show(c.value) == part or c.title == part for c in spec.choices):
            return f"choose {'1' if count == 1 else f'1 to {count}'} or a value"
    return None


def _pick(text: str, spec: Field) -> Any:
    """One choice by value, by 1-based number, or by value or title ignoring case.

    Returns ``text`` itself when nothing matches, for the field's check to reject.
    """
    choices = spec.choices
    for choice in choices:
        if _show(choice.value) == text:
            return choice.value
    number = _ordinal(text, len(choices))
    if number:
        return choices[number - 1].value
    folded = text.casefold()
    hits = [c.value for c in choices if _show(c.value).casefold() == folded or c.title.casefold() == folded]
    return hits[0] if len(hits) == 1 else text


def _parse(text: str, spec: Field) -> Any:
    """The typed value for what the user typed; the text itself when it does not parse,
    so that [`Field.problems`][toolnexus.forms.Field.problems] reports the problem in its words."""
    if spec.type == "choices":
        picked: list[Any] = []
        for part in text.split(","):
            if part.strip():
                value = _pick(part.strip(), spec)
                if not any(type(v) is type(value) and v == value for v in picked):
                    picked.append(value)  # a repeated pick counts once
        return picked if picked else _EMPTY
    if spec.type == "choice":
        return _pick(text, spec)
    if spec.type == "boolean":
        folded = text.casefold()
        if folded in _TRUE:
            return True
        if folded in _FALSE:
            return False
        return text
    if spec.type in ("integer", "number"):
        return _parse_number(text, integer=spec.type == "integer")
    return text


def _parse_number(text: str, *, integer: bool) -> Any:
    if not text.isascii():  # int() and float() read other scripts' digits: not what was shown
        return text
    try:
        return int(text)
    except ValueError:  # not an integer, or more digits than Python converts
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    if not math.isfinite(number):
        return text
    if integer and number.is_integer():
        return int(number)
    return number


class ConsoleResolver:
    """A §10 resolver that asks at the terminal: ``resolver(request) -> Answer``.

    A plain (blocking) callable: give it to [`elicitation_callback`][toolnexus.mcp.elicitation_callback],
    which runs it in a worker thread, or call it yourself.

    - ``kind="input"`` (an MCP form): the schema in ``data["schema"]`` is read with
      [`read_form`][toolnexus.forms.read_form], and each field is asked in the schema's
      order, with its title, description, type, bounds and default. Enter takes
      the default, checked like a typed answer (one that does not fit is refused, and
      Enter no longer takes it); an optional field with no default stays empty, and
      ``:clear`` empties an optional field. Enums are answered by value or 1-based number,
      booleans with y/n, multi-selects with comma-separated values or numbers (a repeated
      pick counts once). Each answer is checked with
      [`Field.problems`][toolnexus.forms.Field.problems] and asked again when wrong, at most
      ``attempts`` times, then the request is cancelled. A review of all values follows:
      ``Send? [Y/n/e]``: Enter or ``y`` sends, ``n`` declines, ``e`` asks the form again
      with the current answers as defaults. A form that seems to ask for a secret (see
      [`sensitive_fields`][toolnexus.forms.sensitive_fields]) is preceded by a warning and
      ``Continue anyway? [y/N]``; such a field is then read without echo at a terminal
      and shown as ``***``. A form that ``read_form`` refuses (outside the elicitation
      subset: a nested object, a free-text list, a remote ``$ref``, ...) is cancelled with
      a warning that says why, before any question.
    - ``kind="authorization"`` (an MCP URL): the full URL and, on its own line, the host a
      browser will visit (highlighted when there is colour), the warnings of
      [`url_warnings`][toolnexus.urls.url_warnings], then
      ``Open this URL in your browser? [y/N]``. ``y`` opens exactly that URL with
      ``webbrowser`` (or prints it to open by hand when no browser can be opened or
      ``open_browser`` is false) and answers ok; ``n`` or Enter
      declines. A URL that is not ``http`` or ``https`` is declined without the question.
    - Any other kind: the prompt and ``[y/N]``.

    ``:decline`` or ``:cancel`` at any prompt declines or cancels the whole request; end of
    input and Ctrl-C cancel it (Ctrl-C reaches only a resolver running in the main thread).
    A second Ctrl-C within [`QUIT_WINDOW`][toolnexus.console.QUIT_WINDOW] seconds of the
    first, or end of input at a terminal, also sets :attr:`quit_requested`.
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
        completions: the client's [`ElicitationCompletions`][toolnexus.mcp.ElicitationCompletions].
            For a URL the server needs visited before it retries a call (a ``-32042``
            error, answered with
            [`call_tool_resolving_urls`][toolnexus.mcp.call_tool_resolving_urls]), the console
            then waits, once the URL is opened, until the user presses Enter or the server says
            the user finished there (it says so, and stops waiting).
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
        completions: ElicitationCompletions | None = None,
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
        self._interactive = isatty(self._in)
        # One question at a time: parallel tool calls may ask at once, from several threads.
        self._turn = threading.Lock()
        # On the process's own terminal, the built-in input() (with line editing when the
        # host has loaded readline); on other streams, their own read and write.
        self._use_input = self._interactive and stdin is None and stdout is None
        self._last_interrupt: float | None = None
        self._quit = False
        self.completions = completions
        """Where the console learns that the server saw the user finish at a URL (see
        [`ElicitationCompletions`][toolnexus.mcp.ElicitationCompletions])."""

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
            self._interrupted()
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

    def _interrupted(self) -> None:
        """A Ctrl-C at a prompt: the second within [`QUIT_WINDOW`][toolnexus.console.QUIT_WINDOW]
        seconds of the first asks to quit."""
        self._say()
        now = _now()
        if self._last_interrupt is not None and now - self._last_interrupt <= QUIT_WINDOW:
            self._quit = True
        else:
            self._last_interrupt = now
            self._say(self._style(f"(press Ctrl-C again within {QUIT_WINDOW:g} s to quit)", "2"))

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
                return Answer.cancel(request)
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
                return Answer.accept(request, data)
            if request.kind == "authorization":
                self._url(request)
            else:
                self._confirm()
            self._say(self._style("→ accepted", "32"))
            return Answer.accept(request)
        except _DeclinedError:
            self._say(self._style("→ declined", "33"))
            return Answer.decline(request)
        except _CancelledError:
            self._say(self._style("→ cancelled", "33"))
            return Answer.cancel(request)

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
        for warning in warnings_for_url(url):
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
        done = self.completions.completion(request.id) if self.completions is not None else None
        if done is not None:
            self._await_return(done)

    def _await_return(self, done: threading.Event) -> None:
        """The server retries the call once the user is back from the browser: wait for
        Enter, or for the server's word that the user finished there."""
        if not done.is_set():
            fd = self._fileno() if self._interactive else None
            prompt = "Press Enter when you have finished in the browser: "
            if fd is None:
                # A script (its next line may already sit in the stream's buffer, where
                # select() cannot see it) or a stream select() cannot watch: Enter only.
                self._read(prompt)
                return
            if self._watch(fd, done, prompt):
                return
            self._say()
        self._say(self._style("The server says you have finished there.", "32"))

    def _watch(self, fd: int, done: threading.Event, prompt: str) -> bool:
        """Wait at a terminal for a line (``True``) or for ``done`` (``False``)."""
        import select

        self._out.write(prompt)
        self._out.flush()
        while not done.is_set():
            try:
                ready, _, _ = select.select([fd], [], [], 0.1)
                line = self._in.readline() if ready else None
            except KeyboardInterrupt:
                self._interrupted()
                raise _CancelledError from None
            if line is not None:
                if not line:  # Ctrl-D: the terminal echoed nothing
                    self._say()
                if line.strip() == ":decline":
                    raise _DeclinedError
                if line.strip() == ":cancel":
                    raise _CancelledError
                return True
        return False

    def _fileno(self) -> int | None:
        if sys.platform == "win32":  # select() takes only sockets there
            return None
        try:
            return self._in.fileno()
        except (AttributeError, ValueError, OSError):
            return None

    # --- form mode -----------------------------------------------------------------------

    def _form(self, request: Request) -> dict[str, Any]:
        form, problem = _read_form(request)
        if problem is not None:
            self._warn(f"this form cannot be answered at a terminal: {problem}")
            raise _CancelledError
        secret_names = sensitive_fields(form)
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
            for spec in form.fields:
                # Editing, Enter keeps what was answered (an empty field stays empty).
                if editing:
                    default, has_default = current.get(spec.name), spec.name in current
                else:
                    default, has_default = spec.default, spec.has_default and spec.default is not None
                value = self._field(spec, default if has_default else None, secret=spec.name in secrets)
                if value is not _EMPTY:
                    values[spec.name] = value
            self._say("Review:")
            if not form.fields:
                self._say("  (no fields)")
            for spec in form.fields:
                if spec.name not in values:
                    shown = "(empty)"
                elif spec.name in secrets:
                    shown = "***"
                else:
                    shown = _clean(_shown(spec, values[spec.name]))
                self._say(f"  {_clean(spec.label)}: {shown}")
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

    def _field(self, spec: Field, default: Any, *, secret: bool) -> Any:
        """Ask one field until its answer fits; ``default`` (``None``: none) is what Enter takes."""
        name = spec.name
        self._say()
        heading = _clean(spec.label)
        if spec.title and spec.title != name:
            heading += f" ({_clean(name)})"
        self._say(self._style(heading, "1"))
        if spec.description:
            self._say(f"  {_clean(spec.description, lines=True)}")
        self._say(f"  {_describe(spec)}{'' if spec.required else ' · optional'}")
        has_default = default is not None
        for _ in range(self.attempts):
            hint = _default_hint(
                default if has_default else None, boolean=spec.type == "boolean", secret=secret
            )
            text = self._read(f"{_clean(name)}{hint}: ", secret=secret)
            if text == ":clear":
                if spec.required:
                    self._warn(f"{name!r} is required: it cannot be left empty")
                    continue
                return _EMPTY
            if not text:
                if not has_default and not spec.required:
                    return _EMPTY
                value = default if has_default else _EMPTY
            else:
                wrong = _wrong_words(text, spec)
                if wrong is not None:
                    self._warn(wrong)
                    continue
                value = _parse(text, spec)
            if value is _EMPTY:
                problems = [f"{name!r} is required"] if spec.required else []
            else:
                problems = spec.problems(value)
            if not problems:
                return value
            for problem in problems:
                self._warn(problem)
            if not text and has_default:
                # The server's own default does not fit its schema: Enter no longer takes it.
                has_default = False
                rest = "" if spec.required else ", or press Enter to leave the field empty"
                self._warn(f"the default does not fit: type a value{rest}")
        raise self._too_many()


def _read_form(request: Request) -> tuple[Form, str | None]:
    """The form, and why the console cannot ask it (``None`` when it can).

    No data at all is a form without fields. A schema that the form model refuses
    (``form_of``) cannot be answered here: asking would lead
    to questions without a valid answer.
    """
    try:
        form = form_of(request)
    except FormError as err:
        return Form(), str(err)
    return (Form() if form is None else form), None


def _default_hint(default: Any, *, boolean: bool, secret: bool) -> str:
    """What follows a field's name in its prompt: the default Enter takes, in brackets."""
    if boolean:
        if isinstance(default, bool):
            return " [Y/n]" if default else " [y/N]"
        return " [y/n]"
    if default is None:
        return ""
    return f" [{'***' if secret else _clean(_show(default))}]"


def _wrong_words(text: str, spec: Field) -> str | None:
    """The console's own hint for an answer in the wrong words, before the field is checked:
    a yes/no answered otherwise, a choice picked by a number that is not offered."""
    if spec.type == "boolean" and not isinstance(_parse(text, spec), bool):
        return "answer y or n"
    return _out_of_range(text, spec)


class _Empty:
    def __repr__(self) -> str:
        return "<empty>"


_EMPTY: Any = _Empty()


def _shown(spec: Field, value: Any) -> str:
    """A value as the review shows it: a choice by its title, as the user picked it."""
    if not spec.choices:
        return _show(value)
    picked = value if isinstance(value, list) else [value]
    titles = [
        next((c.title for c in spec.choices if type(c.value) is type(v) and c.value == v), _show(v))
        for v in picked
    ]
    return ", ".join(titles)


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(_show(v) for v in value)
    if isinstance(value, float):
        return format_number(value)
    return str(value)


def _choices_text(spec: Field) -> str:
    shown = []
    for i, choice in enumerate(spec.choices, 1):
        value = _show(choice.value)
        label = _clean(value)
        if choice.title != value:
            label += f" ({_clean(choice.title)})"
        shown.append(f"{i}) {label}")
    return "  ".join(shown)


def _describe(spec: Field) -> str:
    """The type and bounds of a field, in words (the inbox's hint, with the choices to type)."""
    if spec.type == "choices":
        return f"{count_hint(spec)} of: {_choices_text(spec)} (comma-separated values or numbers)"
    if spec.type == "choice":
        return f"one of: {_choices_text(spec)} (value or number)"
    return takes(spec)

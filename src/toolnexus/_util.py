"""Small helpers shared by every layer, one definition each: escaping, type names, terminal
checks, number formatting (time rules: ``_time``). Standard library only, and no other toolnexus module:
the wire values use it too."""

from __future__ import annotations

import importlib
import inspect
import unicodedata
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any, TextIO

__all__ = [
    "UNSAFE_CATEGORIES",
    "escape_text",
    "format_number",
    "is_async_callable",
    "isatty",
    "lazy_names",
    "type_name",
]

# Control characters (terminal escapes), format characters (bidi overrides, zero-width
# marks) and the Unicode line and paragraph separators: what a server's text may use to
# rewrite, reorder or hide what a terminal or a log viewer shows.
UNSAFE_CATEGORIES = frozenset(("Cc", "Cf", "Zl", "Zp"))


def escape_text(text: str, *, lines: bool = False) -> str:
    """``text`` made safe to show on a terminal or in a log line: every control, format
    (bidi, zero-width) or line-separator character is written as its Python escape
    (``\\x1b``, ``\\u202e``), everything else as it is.

    Line breaks and tabs are kept only with ``lines`` (a prompt or a description); in a
    one-line item (a name, a value, a URL) they could fake the next line.
    """
    if text.isprintable():  # the common case: nothing to escape, no copy
        return text
    out = []
    for ch in text:
        if (lines and ch in "\n\t") or unicodedata.category(ch) not in UNSAFE_CATEGORIES:
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "".join(out)


def is_async_callable(fn: object) -> bool:
    """Whether calling ``fn`` gives a coroutine: an ``async def`` (or a partial of one), or
    an object whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(type(fn), "__call__", None)  # noqa: B004 - a callable object's method
    return call is not None and inspect.iscoroutinefunction(call)


def type_name(value: object) -> str:
    """The name of ``value``'s type, for messages (``"int"``, ``"NoneType"``)."""
    return type(value).__name__


def isatty(stream: TextIO | Any) -> bool:
    """Whether ``stream`` is a terminal; ``False`` for a stream that cannot tell (closed,
    replaced by an object without ``isatty``)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def format_number(value: object) -> str:
    """A number as a person reads it: a float that is whole without its ``.0`` (``2.0`` as
    ``2``), anything else as ``str`` gives it."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def lazy_names(
    module: str, homes: Mapping[str, str], namespace: MutableMapping[str, Any], public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` (PEP 562) for the names it exports from
    modules loaded when a name is first used: ``homes`` maps each such name to its module
    (relative to ``module``), ``namespace`` is the package's ``globals()``, where a name once
    loaded is kept (the next use is a plain lookup), and ``public`` its ``__all__``. Assign
    them under ``if not TYPE_CHECKING:``, with the names imported under ``if TYPE_CHECKING:``,
    so that a type checker sees the names and still reports a misspelt one."""

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, module), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *public})

    return getattr_, dir_


def innermost(err: BaseException) -> BaseException:
    """The failure an exception group stands for (anyio's task groups, and the SDK's
    transports in them, raise groups): its first member, all the way down."""
    while isinstance(getattr(err, "exceptions", None), tuple) and err.exceptions:  # type: ignore[attr-defined]
        err = err.exceptions[0]  # type: ignore[attr-defined]
    return err

"""What the durable subcommands (``call --park``, ``pending``, ``answer``, ``resume``) share:
opening a store, reading a parked call, naming it, and reporting a park."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from .._util import escape_text
from .._wire import Answer, Request
from ..errors import StoreError, StoreUnavailableError
from ._base import EXIT_CONNECTION, EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, CliError
from ._output import Output, reason

if TYPE_CHECKING:
    from mcp import Client

    from ..durable import Pending, Store

__all__ = [
    "add_store_argument",
    "check_can_create",
    "check_era",
    "durable_failure",
    "get_pending",
    "open_store",
    "refuse_inline",
    "report_parked",
    "shown_store",
    "what_is_called",
]


def shown_store(spec: str) -> str:
    """A STORE as the command prints it: any password replaced by ``***``
    ([`redact_store`][toolnexus.durable.redact_store]), then escaped."""
    from ..durable import redact_store

    return escape_text(redact_store(spec))


def _is_postgres(spec: str) -> bool:
    return spec.lower().startswith(("postgresql://", "postgres://"))


def open_store(spec: str, *, create: bool = False, read_only: bool = False) -> Store:
    """The store ``spec`` names (a file, or a ``postgresql://`` URL), opened through
    [`durable.open_store`][toolnexus.durable.open_store]: with ``create`` (the commands that
    write) made on first use, on SQLite and PostgreSQL alike; else (the commands that read)
    a usage error when absent. A usage error too when it is not a store or cannot be read,
    and exit 3 when its database cannot be reached. A read-only opening writes nothing, not
    even the tables. No message shows a password."""
    import sqlite3

    from ..durable import open_store as open_durable_store

    shown = shown_store(spec)
    if create and not read_only and not _is_postgres(spec) and not os.path.exists(spec):
        _check_parent(spec)
    try:
        return open_durable_store(spec, create=create, read_only=read_only)
    except FileNotFoundError:
        raise CliError(EXIT_USAGE, f"{shown}: no such store") from None
    except StoreUnavailableError as err:
        raise CliError(EXIT_CONNECTION, f"cannot reach the store: {escape_text(str(err))}") from None
    except StoreError as err:  # names the store already (never its password)
        raise CliError(EXIT_USAGE, escape_text(str(err))) from None
    except (ValueError, sqlite3.Error, OSError) as err:
        raise CliError(EXIT_USAGE, f"{shown}: cannot open the store: {escape_text(str(err))}") from None


def check_can_create(spec: str) -> None:
    """A usage error now, before any call is made, when a store at ``spec`` could be
    neither opened nor made later. A file is not made here (only when there is something to
    keep); a database's tables are (it is reached and checked at once)."""
    if _is_postgres(spec):
        open_store(spec, create=True).close()
    elif os.path.exists(spec):
        open_store(spec).close()  # it must be a store already
    else:
        _check_parent(spec)


def _check_parent(spec: str) -> None:
    from pathlib import Path

    parent = Path(spec).parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise CliError(EXIT_USAGE, f"{shown_store(spec)}: cannot create a store there")


def get_pending(store: Store, key: str) -> Pending:
    try:
        return store.get(key)
    except KeyError:
        raise CliError(EXIT_USAGE, f"no call is parked under {escape_text(key)!r}") from None
    except ValueError as err:
        raise CliError(EXIT_USAGE, escape_text(str(err))) from None


def what_is_called(pending: Pending) -> str:
    """``tool NAME``, ``prompt NAME`` or ``resource URI``, escaped."""
    kind = {"tools/call": "tool", "prompts/get": "prompt", "resources/read": "resource"}.get(
        pending.method, "call"
    )
    return f"{kind} {escape_text(pending.target)}"


def report_parked(output: Output, spec: str, key: str, pending: Pending, how: str) -> int:
    """Print the key ``pending`` is kept under on stdout, and say how to answer it."""
    output.result(key)
    if pending.task is not None:
        output.error(
            f"{how} as {key}: the server runs the call as task {escape_text(pending.task.id[:80])}; "
            f"a worker polls it and parks its questions: toolnexus worker {shown_store(spec)} ..."
        )
        return EXIT_OK
    count = len(pending.requests)
    questions = "1 question waits" if count == 1 else f"{count} questions wait"
    output.error(f"{how} as {key}: {questions}; answer with: toolnexus answer {shown_store(spec)} {key}")
    return EXIT_OK


def check_era(client: Client, option: str, hint: str) -> None:
    """A usage error when the connection's protocol cannot park a call (before 2026-07-28)."""
    from .._protocol import INPUT_REQUIRED_VERSION, asks_between_rounds

    version = client.protocol_version
    if not asks_between_rounds(version):
        raise CliError(
            EXIT_USAGE,
            f"{option}: the server speaks MCP {version}, where a call cannot be parked (only "
            f"{INPUT_REQUIRED_VERSION} and later); {hint}",
        )


def durable_failure(what: str, err: Exception, server_label: str) -> CliError:
    """A failure of a durable call: the server's error (exit 1) or a lost connection (exit 3)."""
    from mcp import MCPError

    from ._connection import connection_closed, is_connection_failure

    if connection_closed(err) or (not isinstance(err, MCPError) and is_connection_failure(err)):
        return CliError(EXIT_CONNECTION, f"the connection to {server_label} was lost")
    if isinstance(err, MCPError):
        return CliError(EXIT_TOOL_ERROR, f"{what}: {reason(err)}")
    return CliError(EXIT_CONNECTION, f"{what}: the connection to {server_label} failed: {reason(err)}")


def add_store_argument(parser: argparse.ArgumentParser, *, key: bool) -> None:
    parser.add_argument("store", metavar="STORE", help="the store file")
    if key:
        parser.add_argument("key", metavar="KEY", help="the parked call's key")


async def refuse_inline(request: Request) -> Answer:
    """The resolver of a durable connection: never asked on 2026-07-28 (the call parks
    instead); anything that arrives inline is cancelled."""
    return Answer.cancel(request)

"""The ``toolnexus`` command's durable half: park a call, list, answer and resume it later.

- ``toolnexus call ... --park STORE``: when the server asks, the call is parked in the
  [`SqliteStore`][toolnexus.durable.SqliteStore] ``STORE`` instead of asked here; its key
  is printed and the command exits 0.
- ``toolnexus pending STORE``: what waits: key, server, what was called, the questions.
- ``toolnexus answer STORE KEY``: ask the parked questions at the terminal
  ([`ConsoleResolver`][toolnexus.console.ConsoleResolver]) and record the answers.
- ``toolnexus resume STORE KEY (--stdio CMD | --url URL)``: resume the call, print its
  result as ``call`` does, and remove the record once the server has answered.

The connection, the printing of results and the exit codes are ``_cli``'s; only what is
new lives here.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

from . import _cli
from ._cli import EXIT_CONNECTION, EXIT_INTERRUPTED, EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, _CliError
from ._util import escape_text as _clean
from ._wire import Answer, Request

if TYPE_CHECKING:
    from mcp import Client

    from .durable import Pending, Result, SqliteStore

__all__ = ["COMMANDS", "add_commands", "add_park_option", "cmd_call_park", "run"]

COMMANDS = ("pending", "answer", "resume")


# --- the parser ------------------------------------------------------------------------------


def add_park_option(call: argparse.ArgumentParser) -> None:
    """``call --park STORE``."""
    call.add_argument(
        "--park",
        metavar="STORE",
        help="when the server asks, park the call in the store file STORE (created when absent) "
        "instead of asking here; print its key and exit 0 (protocol 2026-07-28 servers only)",
    )


def add_commands(commands: Any) -> None:
    """The ``pending``, ``answer`` and ``resume`` subcommands."""
    pending = commands.add_parser(
        "pending",
        help="list the calls parked in a store",
        description="List the calls parked in STORE, oldest first: key, server, what was called, "
        "and each question (answered or not).",
    )
    pending.add_argument("store", metavar="STORE", help="the store file")

    answer = commands.add_parser(
        "answer",
        help="answer a parked call's questions here",
        description="Ask the questions of the call parked under KEY at the terminal and record the "
        "answers in STORE; then resume it with 'toolnexus resume'.",
    )
    answer.add_argument("store", metavar="STORE", help="the store file")
    answer.add_argument("key", metavar="KEY", help="the parked call's key")
    answer.add_argument("--no-browser", action="store_true", help="never open a browser")
    answer.add_argument("--server-name", help="the name shown for the server that asks (default: its own)")

    resume = commands.add_parser(
        "resume",
        help="resume a parked call with its recorded answers",
        description="Resume the call parked under KEY with the answers recorded in STORE and print "
        "its result as 'call' does. The record is removed once the server has answered; when it "
        "asks again, the call is parked anew under a new key, which is printed.",
    )
    resume.add_argument("store", metavar="STORE", help="the store file")
    resume.add_argument("key", metavar="KEY", help="the parked call's key")
    where = resume.add_mutually_exclusive_group(required=True)
    where.add_argument("--stdio", metavar='"CMD ARGS"', help="start the server with this command line")
    where.add_argument("--url", metavar="URL", help="connect to a streamable HTTP server at URL")
    resume.add_argument(
        "--protocol",
        default="auto",
        metavar="MODE",
        help="protocol negotiation, as for 'call' (a parked call needs 2026-07-28 or later)",
    )


def run(args: argparse.Namespace, stack: list[TextIO]) -> int:
    """Run ``pending``, ``answer`` or ``resume``."""
    if args.command == "pending":
        return _cmd_pending(args)
    if args.command == "answer":
        return _cmd_answer(args)
    return _cmd_resume(args)


# --- helpers ---------------------------------------------------------------------------------


def _open(path: str, *, create: bool) -> SqliteStore:
    import sqlite3

    from .durable import SqliteStore

    if not create and not os.path.exists(path):
        raise _CliError(EXIT_USAGE, f"{path}: no such store")
    try:
        return SqliteStore(path)
    except (ValueError, sqlite3.Error, OSError) as err:
        raise _CliError(EXIT_USAGE, f"{path}: cannot open the store: {err}") from None


def _get(store: SqliteStore, key: str) -> Pending:
    try:
        return store.get(key)
    except KeyError:
        raise _CliError(EXIT_USAGE, f"no call is parked under {key!r} in {store.path}") from None
    except ValueError as err:
        raise _CliError(EXIT_USAGE, str(err)) from None


def _what(pending: Pending) -> str:
    kind = {"tools/call": "tool", "prompts/get": "prompt", "resources/read": "resource"}[pending.method]
    return f"{kind} {_clean(pending.target)}"


def _outcome_text(result: Result) -> str:
    """A result's text: a tool's as ``call`` prints it; a prompt's messages; a resource's contents."""
    from mcp_types import CallToolResult, GetPromptResult

    if isinstance(result, CallToolResult):
        return _cli._result_text(result)
    texts: list[str] = []
    if isinstance(result, GetPromptResult):
        for message in result.messages:
            text = getattr(message.content, "text", None)
            texts.append(text if isinstance(text, str) else f"[{message.content.type} content]")
    else:
        for content in result.contents:
            text = getattr(content, "text", None)
            texts.append(text if isinstance(text, str) else "[blob content]")
    return "\n".join(texts)


def _print_result(what: str, result: Result) -> int:
    from mcp_types import CallToolResult

    text = _outcome_text(result)
    if isinstance(result, CallToolResult) and result.is_error:
        raise _CliError(EXIT_TOOL_ERROR, f"{what} failed: {_cli._error_line(text)}")
    sys.stdout.write(text + ("\n" if text else ""))
    sys.stdout.flush()
    return EXIT_OK


def _parked(store: SqliteStore, pending: Pending, how: str) -> int:
    key = store.put(pending)
    count = len(pending.requests)
    questions = "1 question waits" if count == 1 else f"{count} questions wait"
    sys.stdout.write(key + "\n")
    sys.stdout.flush()
    print(
        f"toolnexus: {how} as {key}: {questions}; answer with: toolnexus answer {store.path} {key}",
        file=sys.stderr,
    )
    return EXIT_OK


async def _refuse_inline(request: Request) -> Answer:
    # Never asked under 2026-07-28 (durable parks instead); cancel anything that arrives inline.
    return Answer(request.id, False, None, "cancelled")


def _check_era(client: Client, option: str, hint: str) -> None:
    from mcp_types.version import is_version_at_least

    from .durable import INPUT_REQUIRED_VERSION

    version = client.protocol_version
    if not is_version_at_least(version, INPUT_REQUIRED_VERSION):
        raise _CliError(
            EXIT_USAGE,
            f"{option}: the server speaks MCP {version}, where a call cannot be parked (only "
            f"{INPUT_REQUIRED_VERSION} and later); {hint}",
        )


def _durable_errors(what: str, err: Exception) -> _CliError:
    from mcp import MCPError

    if isinstance(err, MCPError):
        return _CliError(EXIT_TOOL_ERROR, f"{what}: {_cli._reason(err)}")
    return _CliError(EXIT_CONNECTION, f"{what}: the connection failed: {_cli._reason(err)}")


# --- call --park -------------------------------------------------------------------------------


def cmd_call_park(args: argparse.Namespace, arguments: dict[str, Any] | None, target: Any) -> int:
    """``toolnexus call ... --park STORE``: call the tool; park it when the server asks."""
    from .console import ConsoleResolver
    from .durable import Pending, call_tool

    store = _open(args.park, create=True)
    resolver = ConsoleResolver(args.server_name)  # holds the server's name; never asks

    async def body(client: Client) -> int:
        _check_era(client, "--park", "call without --park to answer at the terminal")
        try:
            outcome = await call_tool(client, args.tool, arguments)
        except Exception as err:
            raise _durable_errors(args.tool, err) from None
        if isinstance(outcome, Pending):
            if resolver.server_name and outcome.server != resolver.server_name:
                from dataclasses import replace

                outcome = replace(outcome, server=resolver.server_name)
            return _parked(store, outcome, "parked")
        return _print_result(args.tool, outcome)

    try:
        return asyncio.run(_cli._connected(target, args.protocol, _refuse_inline, resolver, body))
    finally:
        store.close()


# --- pending ----------------------------------------------------------------------------------


def _cmd_pending(args: argparse.Namespace) -> int:
    store = _open(args.store, create=False)
    try:
        try:
            waiting = store.list()
        except ValueError as err:
            raise _CliError(EXIT_USAGE, str(err)) from None
        if not waiting:
            print(f"toolnexus: nothing waits in {args.store}", file=sys.stderr)
            return EXIT_OK
        out: list[str] = []
        for key, pending in waiting:
            answered = store.answers(key)
            server = _clean(pending.server) if pending.server else "(unnamed server)"
            out.append(f"{key}  {server}  {_what(pending)}")
            for request in pending.requests:
                state = "answered" if request.id in answered else "waiting"
                prompt = " ".join(_clean(request.prompt).split()) or f"({request.kind})"
                line = f"  {request.id}  {state}  {prompt}"
                if request.expiresAt:
                    line += f"  (until {_clean(request.expiresAt)})"
                out.append(line)
        sys.stdout.write("\n".join(out) + "\n")
        sys.stdout.flush()
        return EXIT_OK
    finally:
        store.close()


def _passed(expires_at: str) -> bool:
    """Whether an RFC 3339 deadline has passed; one that cannot be read never has."""
    import datetime as dt

    text = expires_at[:-1] + "+00:00" if expires_at.endswith(("Z", "z")) else expires_at
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return False
    if moment.tzinfo is None:
        return False
    return moment < dt.datetime.now(dt.timezone.utc)


# --- answer ----------------------------------------------------------------------------------


def _cmd_answer(args: argparse.Namespace) -> int:
    from .console import ConsoleResolver

    store = _open(args.store, create=False)
    try:
        pending = _get(store, args.key)
        answered = store.answers(args.key)
        todo = [request for request in pending.requests if request.id not in answered]
        resolver = ConsoleResolver(args.server_name or pending.server, open_browser=not args.no_browser)
        for request in todo:
            if request.expiresAt is not None and _passed(request.expiresAt):
                print(f"toolnexus: {request.id} expired at {_clean(request.expiresAt)}", file=sys.stderr)
                store.record(args.key, Answer(request.id, False, None, "expired"))
                continue
            while True:
                answer = resolver(request)
                try:
                    store.record(args.key, answer)
                    break
                except ValueError as err:
                    print(f"toolnexus: {_clean(str(err))}; asked again", file=sys.stderr)
            if resolver.quit_requested:
                raise _CliError(EXIT_INTERRUPTED, "interrupted (the answers given so far are kept)")
        how = "already answered" if not todo else "answered"
        print(
            f"toolnexus: {args.key} is {how}; resume with: toolnexus resume {args.store} {args.key} "
            "(--stdio CMD | --url URL)",
            file=sys.stderr,
        )
        return EXIT_OK
    finally:
        store.close()


# --- resume ----------------------------------------------------------------------------------


def _cmd_resume(args: argparse.Namespace) -> int:
    from ._pending import elicit_results
    from .console import ConsoleResolver
    from .durable import Pending, resume

    target: Any = args.url if args.url is not None else _cli._stdio_target(args.stdio)
    store = _open(args.store, create=False)
    try:
        pending = _get(store, args.key)
        answers = store.answers(args.key)
        try:
            elicit_results(pending, answers)
        except ValueError as err:
            raise _CliError(
                EXIT_USAGE, f"{err}; answer with: toolnexus answer {args.store} {args.key}"
            ) from None
        resolver = ConsoleResolver(pending.server)
        what = f"{args.key} ({_what(pending)})"

        async def body(client: Client) -> int:
            _check_era(client, "resume", "resume without --protocol legacy")
            try:
                outcome = await resume(client, pending, answers)
            except Exception as err:
                raise _durable_errors(what, err) from None
            if isinstance(outcome, Pending):
                status = _parked(store, outcome, "the server asks again: parked")
                store.remove(args.key)
                return status
            store.remove(args.key)  # the server has answered: done, whatever it said
            return _print_result(what, outcome)

        return asyncio.run(_cli._connected(target, args.protocol, _refuse_inline, resolver, body))
    finally:
        store.close()

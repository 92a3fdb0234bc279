"""The ``toolnexus`` command: answer any MCP server's elicitations at the terminal.

``toolnexus.cli:main`` is the console script's entry point (``python -m toolnexus`` runs it
too). The subcommands: ``demo``, ``call``, ``tools``, ``pending``, ``answer``, ``resume``,
``worker``, ``inbox``; the console page of the docs says what each does, and so does
``toolnexus COMMAND --help``.

Exit status: 0 success, 1 a tool error, 2 a usage error, 3 the server cannot be reached or
the connection ends (one line naming the server), 130 interrupted, 141 stdout closed early
(``toolnexus call ... | head -3``), quietly, as a command killed by SIGPIPE.

How the package is built (each module imports only the ones listed before it):

- ``_base``: the exit statuses, ``CliError`` (an exit status and one line), the registry
  entry ``Command``, and the ``Context`` a command runs with;
- ``_output``: the one output writer, ``Output`` (the result to stdout, escaped at a
  terminal and raw to a pipe; the dialogue; one-line reports on stderr, always escaped) and
  the logging set-up (one line per record, none inside a prompt);
- ``_bridge``: the main-thread resolver bridge, its withdrawal signal and Ctrl-C;
- ``_connection``: the one set of connection options (``--stdio``/``--url``/``--env``/
  ``--server-stderr``/``--protocol``/``--connect-timeout``), the server they name, and
  ``run_connected``, which watches a connection and turns every way it ends into exit 3;
- ``_results``: a result's text and JSON, a tool error's line;
- ``_unattended`` (``--answers``/``--accept-defaults``), ``_interactive`` (connect and answer
  here: the console, the traffic log, the bridge) and ``_stores`` (the durable commands'
  store helpers);
- one module per subcommand (``_demo``, ``_call`` with ``_park``, ``_tools``, ``_pending``,
  ``_answer``, ``_resume``, ``_worker``, ``_inbox``), each exporting ``COMMAND``;
- ``_commands``: the one registry, ``COMMANDS``; ``_main``: the parser, and ``run``, the one
  place failures become exit statuses. ``main`` (here) loads them, and with them the SDK.

Adding a subcommand: a module ``_NAME.py`` in this package with its arguments, its run
function and a ``COMMAND``:

```python
from ._base import EXIT_OK, Command, Context
from ._connection import add_connection_options, run_connected, server_from


def _arguments(parser):  # reuse the shared option sets: add_connection_options,
    add_connection_options(parser)  # add_output_options, add_answer_options


def _run(args, context: Context) -> int:
    server = server_from(args, context.stack)
    ...  # print only through context.output
    return EXIT_OK  # or raise CliError(status, "one line")


COMMAND = Command(
    name="NAME", help="...", description="...", arguments=_arguments, run=_run
)
```

then one line in ``COMMANDS`` in ``_commands.py`` (and its import). Print a result with
``context.output.result(text)``, a line of the dialogue with ``context.output.say(text)``,
a report on stderr with ``context.output.error(text)``; never ``print``. A command that
connects runs its body in ``run_connected(server, body, protocol=args.protocol,
connect_timeout=args.connect_timeout)`` (or ``_interactive.answer_here`` when the user
answers questions), so every way its connection ends is one line and exit 3 as well.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from ._base import EXIT_INTERRUPTED

# The command's insides (``Command``, ``Context``, ``CliError``, the exit statuses, the registry
# and the parser) are its own (``_base``, ``_commands``, ``_main``): this package's one public
# name is the entry point. Loading the subcommands imports the SDK (about a second): ``main``
# loads them inside its own Ctrl-C handling.
__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``toolnexus`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit
    status. A Ctrl-C while the command runs, or while it loads the SDK (most of its first
    second), is ``toolnexus: interrupted`` on stderr and exit 130. Only in the first tenth of
    a second, while Python itself and the standard library start, is it Python's traceback."""
    try:
        from ._main import run

        return run(argv)
    except KeyboardInterrupt:  # before ``run`` handles its own: while loading, parsing, closing
        from ._output import Output  # the one writer (the standard library and _util only)

        with contextlib.ExitStack() as stack:
            Output(stack).error("interrupted")
        return EXIT_INTERRUPTED

"""The one registry of the ``toolnexus`` subcommands, in the order ``--help`` lists them.

Each subcommand is a module of this package with a ``COMMAND``
(`Command`, in `_base`); registering it is one line here.
"""

from __future__ import annotations

from . import _answer, _call, _demo, _inbox, _pending, _resume, _tools, _worker
from ._base import Command

__all__ = ["COMMANDS"]

COMMANDS: tuple[Command, ...] = (
    _demo.COMMAND,
    _call.COMMAND,
    _tools.COMMAND,
    _pending.COMMAND,
    _pending.SHOW,
    _answer.COMMAND,
    _resume.COMMAND,
    _inbox.COMMAND,
    _worker.COMMAND,
)

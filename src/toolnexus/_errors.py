"""Layer 1: the root of every error toolnexus raises on purpose.

A host catches ``ToolnexusError`` to catch them all. Each concrete error also derives from
the built-in it has always been (``ValueError``, ``TypeError``, ``RuntimeError``), so code
that catches those keeps working. Nothing here imports the MCP SDK.
"""

from __future__ import annotations

__all__ = ["ToolnexusError"]


class ToolnexusError(Exception):
    """Base class of every error that toolnexus raises on purpose.

    Bad arguments still raise the built-in ``TypeError``/``ValueError`` a Python caller
    expects; the errors toolnexus defines (a form it cannot read, an answer that does not
    fit, a refused URL, a store problem) derive from this class as well.
    """

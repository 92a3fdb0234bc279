"""The docs site built as ``mkdocs build --strict`` builds it, for the tests that read it."""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["ROOT", "build_site"]

ROOT = Path(__file__).resolve().parent.parent.parent
"""The repository: where ``mkdocs.yml`` is."""


def build_site(out: Path) -> Path:
    """Build the site into ``out`` with the project's ``mkdocs.yml``, strict (a warning
    fails the build); skip the test when mkdocs is not installed (the ``docs`` group)."""
    pytest.importorskip("mkdocs", reason="mkdocs is in the docs group")
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(out), strict=True)
    config.plugins.on_startup(command="build", dirty=False)
    try:
        build(config)
    finally:
        config.plugins.on_shutdown()
    return out

"""Every error toolnexus raises on purpose has one public home, ``toolnexus.errors`` (and is
importable from ``toolnexus``), under ``ToolnexusError``, drawn in that module's tree."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import toolnexus
import toolnexus.errors
from toolnexus.errors import ToolnexusError


def _public_modules() -> list[ModuleType]:
    names = ["toolnexus"] + [
        info.name
        for info in pkgutil.walk_packages(toolnexus.__path__, "toolnexus.")
        if not any(part.startswith("_") for part in info.name.split("."))
    ]
    return [importlib.import_module(name) for name in names]


def test_every_error_is_in_toolnexus_errors_and_importable_from_toolnexus() -> None:
    for name in toolnexus.errors.__all__:
        error = getattr(toolnexus.errors, name)
        assert inspect.isclass(error)
        assert issubclass(error, ToolnexusError), name
        assert getattr(toolnexus, name) is error, name
        assert name in (toolnexus.errors.__doc__ or ""), f"{name} is not in the tree"


def test_no_other_public_module_lists_an_error() -> None:
    listed = [
        f"{module.__name__}.{name}"
        for module in _public_modules()
        if module not in (toolnexus, toolnexus.errors)
        for name in getattr(module, "__all__", ())
        if inspect.isclass(getattr(module, name, None)) and issubclass(getattr(module, name), BaseException)
    ]
    assert listed == []


def test_every_toolnexus_error_class_is_defined_there() -> None:
    found = {
        f"{cls.__module__}.{cls.__qualname__}"
        for module in _public_modules()
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, ToolnexusError)
    }
    assert {name.rsplit(".", 1)[0] for name in found} == {"toolnexus.errors"}, found

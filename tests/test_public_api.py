from __future__ import annotations

import importlib
import inspect

import compaction
from compaction import exceptions


def test_all_names_exist_and_are_unique() -> None:
    assert len(compaction.__all__) == len(set(compaction.__all__))
    for name in compaction.__all__:
        assert hasattr(compaction, name), name


def test_every_exception_is_exported_and_rooted() -> None:
    defined = {
        name
        for name, value in vars(exceptions).items()
        if inspect.isclass(value)
        and issubclass(value, Exception)
        and value.__module__ == exceptions.__name__
    }
    assert defined <= set(compaction.__all__)
    for name in defined:
        assert issubclass(getattr(exceptions, name), compaction.CompactionError)


def test_exception_tree_in_docstring_names_every_class() -> None:
    doc = exceptions.__doc__ or ""
    for name, value in vars(exceptions).items():
        if (
            inspect.isclass(value)
            and issubclass(value, Exception)
            and value.__module__ == exceptions.__name__
        ):
            assert name in doc, name


def test_all_is_exactly_the_lazy_exports() -> None:
    lazy = set(compaction._EXPORTS)
    assert set(compaction.__all__) == lazy | {"__version__"}
    for name, module in compaction._EXPORTS.items():
        assert getattr(compaction, name) is getattr(importlib.import_module(module), name)

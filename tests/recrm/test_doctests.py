import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["recrm.components.ranking", "recrm.composite"])
def test_doctests(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_wrapper_doctest_on_the_real_env():
    pytest.importorskip("situ_gym.scene.loader")
    pytest.importorskip("situ_gym.env")
    result = doctest.testmod(importlib.import_module("recrm.wrapper"))
    assert result.attempted > 0 and result.failed == 0

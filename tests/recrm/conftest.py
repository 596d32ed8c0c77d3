import pytest

from tests.recrm.world import make_index, make_task


@pytest.fixture(scope="module")
def index():
    return make_index()


@pytest.fixture(scope="module")
def task():
    return make_task()

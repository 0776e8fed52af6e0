"""The command-line tests run their commands in this process (`tests.conftest.cli_in_process`)
where a child of their own proves nothing more, and each module's commands share one worker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jaxscope.session import shared_workers


@pytest.fixture(autouse=True, scope="module")
def one_worker_per_module() -> Iterator[None]:
    """The module's commands share their worker (closed after its last test): each one costs its
    own work, not a fresh Python importing JAX."""
    with shared_workers():
        yield

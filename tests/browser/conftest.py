"""The browser tests' page: one headless Chromium window per test (fails, never skips, without it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.browser.harness import Page, browser_missing


@pytest.fixture()
def page() -> Iterator[Page]:
    missing = browser_missing()
    assert not missing, missing  # (fails, never skips: `.ci/run` installs it)
    p = Page()
    yield p
    p.close()

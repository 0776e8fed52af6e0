"""`jaxscope.graph(..., scopes=True)`: the Python API draws the scoped view as `export --scopes` does."""

from __future__ import annotations

import jaxscope
from tests.conftest import MODELS


def test_graph_with_scopes_draws_modules_per_pass():
    image = jaxscope.graph(f"{MODELS}::deep_step", scopes=True, collapse=1)
    titles = {c.title for c in image.layout.clusters}
    assert {"Deep (forward)", "Deep (backward)"} <= titles
    assert ">block1<" in image.svg and len(image.layout.nodes) <= 150
    plain = jaxscope.graph(f"{MODELS}::deep_step", collapse=1)
    assert "Deep (forward)" not in {c.title for c in plain.layout.clusters}

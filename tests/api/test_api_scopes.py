"""`jaxscope.graph(..., scopes=True)`: the Python API draws the scoped view as `export --scopes` does."""

from __future__ import annotations

import jaxscope
from tests.conftest import MODELS


def test_graph_with_scopes_draws_modules_per_pass():
    image = jaxscope.graph(f"{MODELS}::deep_step", scopes=True)
    titles = {c.title for c in image.layout.clusters}
    # the model under the loss that applies it, in each pass, opened to its blocks (block1 reads the batch: not like the others)
    assert {"adamw_step (forward)", "adamw_step (backward)", "Deep"} <= titles
    assert ">block1<" in image.svg and ">block2 (2 alike)<" in image.svg and len(image.layout.nodes) <= 150
    plain = jaxscope.graph(f"{MODELS}::deep_step", collapse=1)
    assert "Deep (forward)" not in {c.title for c in plain.layout.clusters}

"""Sub-graph titles by the function they run (analysis.body_names.body_role): what a reader sees on a cluster."""

from __future__ import annotations

from jaxscope.analysis.body_names import body_role


def test_loop_bodies_are_titled_by_their_function() -> None:
    assert body_role("scan body (length 6)", "scan", "layer") == "scan of layer (length 6)"
    assert body_role("while body", "while", "step") == "while body of step"
    assert body_role("checkpoint", "checkpoint", "block") == "checkpoint of block"
    assert body_role("while body", "while", "<lambda>") == "while body"  # a lambda's name says nothing


def test_a_while_over_a_function_named_body_does_not_say_it_twice() -> None:
    """Issue 60.5: "while body of body"."""
    assert body_role("while body", "while", "body") == "while body"

"""Exact jaxpr links by program order (issue 32.1): every equation, per call site, its own line."""

from __future__ import annotations

import pytest

from jaxscope.ir import linking
from jaxscope.schema.graph import resolve
from jaxscope.session import trace
from tests.conftest import MODELS


@pytest.fixture(scope="module")
def deep():
    return trace(f"{MODELS}::deep_step", None, jaxpr_text=True, diagnose=False)


def test_a_train_step_with_three_identical_blocks_links_every_equation_to_its_own_line(deep):
    text = deep.jaxpr_text
    lines = text.split("\n")
    links = linking.jaxpr_links(deep.graph, text)
    total = deep.graph.top.total_eqns
    shows = [p for p, n in links.exact.items() if resolve(deep.graph, p)[1].label.split("(")[0] in lines[n - 1]]
    assert len(shows) >= 0.95 * total, (len(shows), total)
    # every top-level dot_general (three blocks and a head, forward and backward) owns its line
    dots = [n.id for n in deep.graph.top.nodes if n.kind == "eqn" and n.label == "dot_general"]
    assert len(dots) >= 12
    owned = [links.lines_for_node(p) for p in dots]
    assert all(len(o) == 1 for o in owned) and len({o[0] for o in owned}) == len(dots)
    for path, (line,) in zip(dots, owned, strict=True):
        assert "dot_general" in lines[line - 1] and links.nodes_for_line(line) == [path]


def test_a_hoisted_body_links_every_call_site_to_its_printed_lines():
    result = trace(str(MODELS.parents[3] / "examples" / "prng.py"), None, jaxpr_text=True, diagnose=False)
    text = result.jaxpr_text
    assert text.startswith("let _uniform = { lambda")  # JAX prints a body used twice once, on top
    links = linking.jaxpr_links(result.graph, text)
    assert len(links.exact) == result.graph.top.total_eqns
    inside = [p for p in links.exact if "/" in p and resolve(result.graph, p)[1].label == "random_bits"]
    assert len(inside) >= 2 and all(text.split("\n")[links.exact[p] - 1].strip().startswith(("h:", "v:")) for p in inside)


def test_a_text_that_does_not_line_up_falls_back_to_locations(deep):
    text = deep.jaxpr_text.replace(" = dot_general", " = dot_generalx", 1)  # another printer's idea of a name
    links = linking.jaxpr_links(deep.graph, text)
    assert links.exact == {} and any(links.lines_for_node(p) for p in links.sources)  # by location, as before


def test_jaxscope_jaxpr_puts_locations_where_a_reader_finds_them():
    """Issue 60.5: JAX aligns every `# file:line` past the longest line (column ~210 in a train
    step); `jaxscope jaxpr` puts them at column 88 (two spaces after longer code), drops the empty
    ones and keeps every line and its words."""
    long = "    cx:f32[8,10] = pjit[name=step jaxpr={ lambda ; a:f32[8,10]. let b = sin a in (b,) }] ab" + " " * 40
    text = "\n".join(
        [
            "{ lambda ; a:f32[8]. let",
            "    b:f32[8] = sin a" + " " * 190 + "# /home/u/p/m.py:3:8 (f)",
            "    c:f32[8] = cos b" + " " * 190 + "# ",
            long + "# /home/u/p/m.py:4:9 (f)",
            "    d:f32[8] = tanh c" + " " * 190 + "# /venv/lib/python3.12/site-packages/flax/nnx/module.py:7:1 (call)",
            "  in (c,) }",
        ]
    )
    tidy = linking.tidy_comments(text).split("\n")
    assert len(tidy) == 6 and all(line == line.rstrip() for line in tidy)
    assert tidy[1].index("# /home/u/p/m.py:3:8 (f)") == 90 and tidy[2] == "    c:f32[8] = cos b"
    assert tidy[3] == long.rstrip() + "  # /home/u/p/m.py:4:9 (f)"
    assert tidy[4].endswith("  # flax/nnx/module.py:7:1 (call)")  # a library named from its package, not where pip put it
    assert [linking.split_comment(a)[0].split() for a in tidy] == [linking.split_comment(a)[0].split() for a in text.split("\n")]

"""Families and themes: every primitive family has a readable, distinct style in every theme."""

from __future__ import annotations

import re

import pytest

from jaxscope.render.styles import FAMILIES, THEMES, Theme, family, family_title, get_theme, primitive_family
from jaxscope.schema.graph import Node

HEX = re.compile(r"^#[0-9a-f]{6}$")


def eqn(name: str) -> Node:
    return Node("e0", "eqn", name)


@pytest.mark.parametrize(
    ("prim", "fam"),
    [
        ("add", "elementwise"),
        ("mul", "elementwise"),
        ("sin", "elementwise"),
        ("tanh", "elementwise"),
        ("exp", "elementwise"),
        ("max", "elementwise"),
        ("select_n", "elementwise"),
        ("integer_pow", "elementwise"),
        ("logistic", "elementwise"),
        ("erf", "elementwise"),
        ("reduce_precision", "elementwise"),
        ("reduce_sum", "reduction"),
        ("reduce_max", "reduction"),
        ("reduce_and", "reduction"),
        ("argmax", "reduction"),
        ("argmin", "reduction"),
        ("cumsum", "reduction"),
        ("cumlogsumexp", "reduction"),
        ("reduce_window_sum", "reduction"),
        ("dot_general", "linalg"),
        ("conv_general_dilated", "linalg"),
        ("cholesky", "linalg"),
        ("triangular_solve", "linalg"),
        ("eig", "linalg"),
        ("eigh", "linalg"),
        ("svd", "linalg"),
        ("qr", "linalg"),
        ("lu", "linalg"),
        ("gather", "indexing"),
        ("scatter", "indexing"),
        ("scatter-add", "indexing"),
        ("scatter_mul", "indexing"),
        ("dynamic_slice", "indexing"),
        ("dynamic_update_slice", "indexing"),
        ("slice", "indexing"),
        ("pad", "indexing"),
        ("concatenate", "indexing"),
        ("select_and_scatter_add", "indexing"),
        ("sort", "indexing"),
        ("reshape", "shape"),
        ("broadcast_in_dim", "shape"),
        ("transpose", "shape"),
        ("squeeze", "shape"),
        ("expand_dims", "shape"),
        ("convert_element_type", "shape"),
        ("rev", "shape"),
        ("iota", "shape"),
        ("copy", "shape"),
        ("cond", "control"),
        ("while", "control"),
        ("scan", "control"),
        ("jit", "control"),
        ("pjit", "control"),
        ("closed_call", "control"),
        ("remat2", "control"),
        ("checkpoint", "control"),
        ("shard_map", "control"),
        ("custom_linear_solve", "control"),
        ("random_bits", "random"),
        ("random_seed", "random"),
        ("random_wrap", "random"),
        ("threefry2x32", "random"),
        ("psum", "collective"),
        ("pmax", "collective"),
        ("all_gather", "collective"),
        ("all_to_all", "collective"),
        ("ppermute", "collective"),
        ("axis_index", "collective"),
        ("psum_invariant", "collective"),
        ("pvary", "collective"),
        ("reduce_scatter", "collective"),
        ("custom_jvp_call", "custom"),
        ("custom_vjp_call", "custom"),
        ("custom_vmap_call", "custom"),
        ("debug_print", "effect"),
        ("debug_callback", "effect"),
        ("pure_callback", "effect"),
        ("io_callback", "effect"),
        ("name", "effect"),
        ("no_such_primitive", "other"),
        ("", "other"),
    ],
)
def test_primitive_families(prim, fam):
    assert family(eqn(prim)) == fam
    assert primitive_family(prim) == fam


def test_data_node_kinds_have_their_own_families():
    for kind in ("input", "output", "const", "literal"):
        # the label must not matter: an input called "add" is still an input
        assert family(Node("n", kind, "add")) == kind


def test_families_are_ordered_and_titled():
    assert len(FAMILIES) == len(set(FAMILIES))
    assert FAMILIES[0] == "elementwise" and "other" in FAMILIES
    for fam in FAMILIES:
        title = family_title(fam)
        assert title and title[0].isupper()
    assert family_title("linalg") == "Linear algebra"


def test_get_theme():
    assert set(THEMES) == {"light", "dark", "transparent"}
    assert get_theme("dark") is THEMES["dark"]
    with pytest.raises(ValueError) as err:
        get_theme("solarized")
    for name in THEMES:
        assert name in str(err.value)


def _valid(colour: str) -> bool:
    return colour == "currentColor" or bool(HEX.match(colour))


@pytest.mark.parametrize("name", sorted(THEMES))
def test_theme_is_complete_and_valid(name):
    t = get_theme(name)
    assert isinstance(t, Theme) and t.name == name
    hash(t)  # frozen and hashable, usable as a cache key
    for colour in (t.text, t.muted, t.edge, t.edge_unrouted, t.cluster_border, t.title_text, *t.cluster_fills):
        assert _valid(colour), colour
    assert t.background is None or HEX.match(t.background)
    assert HEX.match(t.ink)
    for fam in FAMILIES:
        style = t.style(fam)
        assert _valid(style.fill) and _valid(style.border), (fam, style)
    assert t.style("unheard-of") == t.style("other")
    assert t.cluster_fill(0) == t.cluster_fills[0] and t.cluster_fill(99) == t.cluster_fills[-1]
    for opacity in (t.muted_opacity, t.edge_opacity, t.unrouted_opacity, t.fill_opacity, t.cluster_opacity):
        assert 0 < opacity <= 1


def _luminance(hex_colour: str) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.mark.parametrize("name", ["light", "dark"])
def test_opaque_themes_are_readable(name):
    t = get_theme(name)
    assert t.background is not None
    for fam in FAMILIES:
        style = t.style(fam)
        assert contrast(t.text, style.fill) >= 7.0, (fam, "text on fill")  # WCAG AAA
        assert contrast(t.muted, style.fill) >= 4.5, (fam, "avals line on fill")  # WCAG AA
        assert contrast(style.border, t.background) >= 1.8, (fam, "border visible on the page")
    for fill in t.cluster_fills:
        assert contrast(t.title_text, fill) >= 4.5
    assert contrast(t.edge, t.background) >= 3.0
    assert contrast(t.edge_unrouted, t.background) >= 1.8


def test_dark_theme_is_dark_and_light_is_light():
    light, dark = get_theme("light"), get_theme("dark")
    assert _luminance(light.background) > 0.9 > 0.05 > _luminance(dark.background)
    assert _luminance(dark.text) > 0.7 and _luminance(light.text) < 0.05
    for fam in FAMILIES:
        assert _luminance(dark.style(fam).fill) < 0.06, fam
        assert _luminance(light.style(fam).fill) > 0.6, fam


def test_equation_families_have_distinct_colours():
    eqn_families = [f for f in FAMILIES if f not in ("input", "output", "const", "literal")]
    for name in THEMES:
        t = get_theme(name)
        borders = [t.style(f).border for f in eqn_families]
        assert len(set(borders)) == len(borders), name
        if name != "transparent":
            fills = [t.style(f).fill for f in eqn_families]
            assert len(set(fills)) == len(fills), name


def test_transparent_theme_follows_the_page():
    t = get_theme("transparent")
    assert t.background is None
    assert t.text == t.edge == t.title_text == "currentColor"
    assert t.fill_opacity < 0.5  # tinted fills that work on light and dark pages
    assert t.concrete("currentColor") == t.ink and t.concrete("#123456") == "#123456"

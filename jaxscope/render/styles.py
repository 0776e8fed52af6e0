"""Node families and colour themes, shared by the SVG/DOT exporters and the Qt app.

A node's *family* groups primitives by what they do (element-wise maths, linear algebra,
indexing, control flow, ...); renderers colour a node by its family. Input, output, constant and
literal nodes have families of their own and are also told apart by shape, never by colour alone.

Palettes
--------
The hues follow the Okabe-Ito / Paul Tol colour-blind-safe sets (blue, vermillion, bluish green,
amber, violet, cyan, olive, rose, brown, grey): the common pairs (element-wise vs linear algebra vs
reduction vs shape) stay distinct under deuteranopia and protanopia. Fills are soft so black (or,
in the dark theme, light) text keeps a contrast ratio above 10:1; borders carry the saturated hue.

* ``light``: white page, pale fills, dark text.
* ``dark``: slate page, dark tinted fills, light text and bright borders.
* ``transparent``: no background; text, edges and titles are ``currentColor`` and fills are the
  hue at low opacity, so an SVG *inlined* in HTML follows the page's colour in light and dark
  mode. Formats that cannot express ``currentColor`` (DOT, PNG, PDF) use `Theme.ink` instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from jaxscope.schema.graph import Graph, Node, group_of
from jaxscope.schema.primitives import primitive

# Display order (legend, docs): equation families first, then the data-node families.
FAMILIES: tuple[str, ...] = (
    "elementwise",
    "linalg",
    "reduction",
    "indexing",
    "shape",
    "control",
    "custom",
    "random",
    "collective",
    "effect",
    "other",
    "input",
    "output",
    "const",
    "literal",
)

_TITLES = {
    "elementwise": "Element-wise",
    "linalg": "Linear algebra",
    "reduction": "Reduction",
    "indexing": "Indexing",
    "shape": "Shape & dtype",
    "control": "Control flow",
    "custom": "Custom rule",
    "random": "Random",
    "collective": "Collective",
    "effect": "Effect / callback",
    "other": "Other",
    "input": "Input",
    "output": "Output",
    "const": "Constant",
    "literal": "Literal",
}

_KIND_FAMILIES = {"input": "input", "output": "output", "const": "const", "literal": "literal"}


def primitive_family(name: str) -> str:
    """The family of a primitive name (`schema.primitives`); unknown names are "other"."""
    return primitive(name).family


def family(node: Node) -> str:
    """The family a node is coloured by: its kind for data nodes, its primitive's for equations."""
    fam = _KIND_FAMILIES.get(node.kind)
    return fam if fam is not None else primitive_family(node.label)


def family_title(fam: str) -> str:
    """A human title for a family, e.g. "linalg" -> "Linear algebra"."""
    return _TITLES.get(fam, fam.replace("_", " ").capitalize())


@dataclass(frozen=True, slots=True)
class FamilyStyle:
    fill: str
    border: str


@dataclass(frozen=True, slots=True)
class Theme:
    """Colours for one look. Colours are ``#rrggbb`` or ``currentColor``; opacities are 0..1."""

    name: str
    background: str | None  # None: no background at all
    text: str
    muted: str  # secondary text: avals lines, literals, legend captions
    edge: str
    edge_unrouted: str
    cluster_fills: tuple[str, ...]  # by cluster depth 1, 2, ...; the last repeats
    cluster_border: str
    title_text: str
    families: Mapping[str, FamilyStyle] = field(hash=False, compare=False)
    ink: str = "#1f2328"  # stands in for currentColor where a format cannot express it
    muted_opacity: float = 1.0
    edge_opacity: float = 1.0
    unrouted_opacity: float = 1.0
    fill_opacity: float = 1.0
    cluster_opacity: float = 1.0
    backward_fills: tuple[str, ...] = ()  # clusters of a model's backward pass, by depth (else `cluster_fills`)

    def style(self, fam: str) -> FamilyStyle:
        return self.families.get(fam) or self.families["other"]

    def cluster_fill(self, depth: int, pass_: str = "") -> str:
        fills = self.backward_fills if pass_ == "backward" and self.backward_fills else self.cluster_fills
        return fills[min(max(depth, 1), len(fills)) - 1]

    def concrete(self, colour: str) -> str:
        """`colour` with ``currentColor`` replaced by `ink` (for DOT and raster formats)."""
        return self.ink if colour == "currentColor" else colour


def _families(pairs: dict[str, tuple[str, str]]) -> Mapping[str, FamilyStyle]:
    assert set(pairs) == set(FAMILIES), sorted(set(FAMILIES) ^ set(pairs))
    return MappingProxyType({fam: FamilyStyle(*pairs[fam]) for fam in FAMILIES})


_LIGHT = {  # fill, border
    "elementwise": ("#dceaf7", "#2f6fa8"),
    "linalg": ("#fbe0cf", "#c2560f"),
    "reduction": ("#d4efe3", "#1b8a64"),
    "indexing": ("#fbefcf", "#a87800"),
    "shape": ("#eceef1", "#7a818b"),
    "control": ("#e8e0f5", "#6c4fb0"),
    "custom": ("#efe4d8", "#8b6642"),
    "random": ("#f2f0c4", "#838015"),
    "collective": ("#d6eff7", "#2589aa"),
    "effect": ("#f8dce8", "#b0396f"),
    "other": ("#f2f2f2", "#8f8f8f"),
    "input": ("#ffffff", "#3b4a5a"),
    "output": ("#e4e8ec", "#3b4a5a"),
    "const": ("#f6f2e6", "#8a7b55"),
    "literal": ("#ffffff", "#9aa1a9"),
}

_DARK = {
    "elementwise": ("#1e3552", "#74aee3"),
    "linalg": ("#4b2a17", "#f0904f"),
    "reduction": ("#173f33", "#52c79d"),
    "indexing": ("#45381a", "#e3b443"),
    "shape": ("#31353c", "#a2a9b2"),
    "control": ("#33294b", "#ad8fe6"),
    "custom": ("#3e3226", "#c89e70"),
    "random": ("#3b3a17", "#c9c34d"),
    "collective": ("#163c48", "#5cc3e0"),
    "effect": ("#4a2034", "#e57dab"),
    "other": ("#2d3036", "#8d939c"),
    "input": ("#1b1e24", "#c5ced8"),
    "output": ("#2b313a", "#c5ced8"),
    "const": ("#302c21", "#c2b38b"),
    "literal": ("#1b1e24", "#7d858f"),
}

# Transparent: one mid-tone hue per family (halfway between the light and dark borders) as the
# border and, at low opacity, as the fill, so it reads on white and on near-black pages alike.
_MID = {
    "elementwise": "#518ec5",
    "linalg": "#d9732f",
    "reduction": "#36a880",
    "indexing": "#c59621",
    "shape": "#8e959e",
    "control": "#8c6fcb",
    "custom": "#a98259",
    "random": "#a6a131",
    "collective": "#40a6c5",
    "effect": "#ca5b8d",
    "other": "#8e9195",
    "const": "#a69770",
    "literal": "#8b939c",
}
_TRANSPARENT = {fam: (hue, hue) for fam, hue in _MID.items()}
_TRANSPARENT["input"] = ("currentColor", "currentColor")
_TRANSPARENT["output"] = ("currentColor", "currentColor")

THEMES: Mapping[str, Theme] = MappingProxyType(
    {
        "light": Theme(
            name="light",
            background="#ffffff",
            text="#1f2328",
            muted="#57606a",
            edge="#57606a",
            edge_unrouted="#9aa1a9",
            cluster_fills=("#f4f6f9", "#eaeef3", "#e0e6ed"),
            cluster_border="#b8c0ca",
            title_text="#3b4552",
            families=_families(_LIGHT),
            backward_fills=("#fbf2e8", "#f6e9da", "#f0dfcb"),
        ),
        "dark": Theme(
            name="dark",
            background="#16191e",
            text="#e6e8eb",
            muted="#a3acb6",
            edge="#9aa3ad",
            edge_unrouted="#5f6772",
            cluster_fills=("#1e2229", "#252a32", "#2c323b"),
            cluster_border="#444c57",
            title_text="#c3cad3",
            families=_families(_DARK),
            backward_fills=("#29221b", "#302820", "#372e25"),
            ink="#e6e8eb",
        ),
        "transparent": Theme(
            name="transparent",
            background=None,
            text="currentColor",
            muted="currentColor",
            edge="currentColor",
            edge_unrouted="currentColor",
            cluster_fills=("currentColor",),
            backward_fills=("#d9822b",),
            cluster_border="#8f969e",
            title_text="currentColor",
            families=_families(_TRANSPARENT),
            muted_opacity=0.72,
            edge_opacity=0.65,
            unrouted_opacity=0.4,
            fill_opacity=0.16,
            cluster_opacity=0.05,
        ),
    }
)


def cluster_passes(graph: Graph) -> dict[str, str]:
    """Cluster path -> the pass of the module group it draws (`schema.graph.group_of`), for the
    groups of a pass: the backward pass's clusters are tinted apart from the forward's."""
    out: dict[str, str] = {}
    stack = [("", graph.top)]
    while stack:
        prefix, body = stack.pop()
        for n in body.nodes:
            group = group_of(n)
            if group is None:
                continue
            if group[1]:
                out[f"{prefix}{n.id}:0"] = group[1]
            stack.append((f"{prefix}{n.id}:0/", graph.bodies[n.subgraphs[0].body]))
    return out


def get_theme(name: str) -> Theme:
    """The theme called `name`; ValueError listing the valid names otherwise."""
    try:
        return THEMES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown theme {name!r}; choose one of: {', '.join(THEMES)}") from None

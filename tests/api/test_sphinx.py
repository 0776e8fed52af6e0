"""The ``jaxscope-graph`` Sphinx directive: a tiny project builds, and its pages show the graphs."""

from __future__ import annotations

import pathlib
import re
import xml.etree.ElementTree as ET

from sphinx.application import Sphinx

ROOT = pathlib.Path(__file__).resolve().parents[2]

INDEX = """\
Graphs
======

.. jaxscope-graph:: basics.py::predict

.. jaxscope-graph:: basics.py::layer
   :args: f32[16,4], f32[4,8], f32[8]
   :theme: dark
   :direction: LR
   :highlight: tanh
   :long-edges: whole
   :caption: The *layer* function.
   :alt: layer as a graph

.. jaxscope-graph:: broken.py::f
   :args: f32[3]
"""

BROKEN = """\
def f(x):
    if x.sum() > 0:
        return x
    return -x
"""


def build(src: pathlib.Path, out: pathlib.Path) -> str:
    """Build the project as HTML; returns the warnings."""
    import io

    warnings = io.StringIO()
    app = Sphinx(str(src), str(src), str(out), str(out / ".doctrees"), "html", status=None, warning=warnings, freshenv=True)
    app.build()
    return warnings.getvalue()


def test_directive_renders_images_and_figures(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["jaxscope.sphinx_ext"]\n')
    (src / "basics.py").write_text((ROOT / "examples" / "basics.py").read_text())
    (src / "broken.py").write_text(BROKEN)
    (src / "index.rst").write_text(INDEX)
    out = tmp_path / "out"
    warnings = build(src, out)

    # the user's error is a warning at the directive's line, with the message, not a crash
    assert re.search(r"index\.rst:15: WARNING: jaxscope-graph broken\.py::f: .*TracerBoolConversionError", warnings), warnings
    assert warnings.count("WARNING") == 1, warnings

    html = (out / "index.html").read_text()
    images = re.findall(r'<img [^>]*src="(_images/jaxscope-[0-9a-f]{16}\.svg)"', html)
    assert len(images) == 2 and images[0] != images[1], html
    for rel in images:
        root = ET.fromstring((out / rel).read_text())
        assert root.tag.endswith("svg")
    assert 'alt="layer as a graph"' in html
    figure = html[html.index("<figure") : html.index("</figure>")]
    assert images[1] in figure and "<em>layer</em>" in figure  # the caption, with its inline markup
    assert "<figure" not in html[: html.index(images[0])]  # the first one is a plain image
    layer_svg = (out / images[1]).read_text()
    assert 'class="highlight"' in layer_svg and "#16191e" in layer_svg  # highlighted, dark background

    # a rebuild from scratch reuses the staged renderings (named by a hash of target, options, source)
    staged = sorted((out / ".doctrees" / "jaxscope").glob("jaxscope-*.svg"))
    assert [p.name for p in staged] == sorted(pathlib.PurePath(rel).name for rel in images)
    stamps = [p.stat().st_mtime_ns for p in staged]
    (src / "index.rst").write_text(INDEX[: INDEX.index(".. jaxscope-graph:: broken.py")])  # failures are not cached
    assert "WARNING: jaxscope-graph " not in build(src, out)
    assert [p.stat().st_mtime_ns for p in staged] == stamps
    assert sorted(re.findall(r'src="(_images/jaxscope-[0-9a-f]{16}\.svg)"', (out / "index.html").read_text())) == sorted(images)


def test_an_interactive_graph_is_the_page_in_a_frame(tmp_path):
    """Issue 51: `:interactive:` puts the HTML page in the built page, in a sandboxed frame (its
    script apart from the theme's), with the function's equations and its source lines in it."""
    import html

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["jaxscope.sphinx_ext"]\n')
    (src / "basics.py").write_text((ROOT / "examples" / "basics.py").read_text())
    (src / "index.rst").write_text("Graphs\n======\n\n.. jaxscope-graph:: basics.py::predict\n   :interactive:\n")
    out = tmp_path / "out"
    warnings = build(src, out)
    assert "jaxscope-graph basics.py" not in warnings, warnings  # (a failure is a warning at the directive)
    page = (out / "index.html").read_text(encoding="utf-8")
    frame = re.search(r'<iframe class="jaxscope-graph"[^>]*srcdoc="([^"]*)"[^>]*sandbox="allow-scripts"', page)
    assert frame is not None
    inner = html.unescape(frame.group(1))
    assert inner.startswith("<!DOCTYPE html>") and 'id="jaxscope-data"' in inner and "dot_general" in inner
    assert "def predict(" in inner  # its source lines travel with it

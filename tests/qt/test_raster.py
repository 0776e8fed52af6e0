"""PNG and PDF export through QtSvg, headless."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from PySide6 import QtGui

from jaxscope.exporter import export
from jaxscope.qt.graph import raster
from jaxscope.render.svg import render_svg


def read_png(path) -> QtGui.QImage:
    image = QtGui.QImage(str(path))
    assert not image.isNull(), path
    return image


def test_png_size_follows_dpi(sample, tmp_path):
    graph, layout = sample
    svg = render_svg(graph, layout)
    assert raster.svg_to_png(svg, str(tmp_path / "a.png"), dpi=96) == (540, 916)
    assert raster.svg_to_png(svg, str(tmp_path / "b.png"), dpi=192) == (1080, 1832)
    a, b = read_png(tmp_path / "a.png"), read_png(tmp_path / "b.png")
    assert (a.width(), a.height()) == (540, 916)
    assert (b.width(), b.height()) == (2 * a.width(), 2 * a.height())
    assert round(b.dotsPerMeterX() * 0.0254) == 192
    assert (tmp_path / "a.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_png_has_content_and_theme_background(sample, tmp_path):
    graph, layout = sample
    for theme in ("light", "dark", "transparent"):
        raster.svg_to_png(render_svg(graph, layout, theme=theme), str(tmp_path / f"{theme}.png"))
    light, dark, clear = (read_png(tmp_path / f"{t}.png") for t in ("light", "dark", "transparent"))
    assert QtGui.QColor(light.pixel(1, 1)).name() == "#ffffff"
    assert QtGui.QColor(dark.pixel(1, 1)).name() == "#16191e"
    assert QtGui.QColor.fromRgba(clear.pixel(1, 1)).alpha() == 0
    # something was drawn: the centre of the dot_general box (e1 at 230,470) is its fill colour
    assert QtGui.QColor(light.pixel(230, 462)).name() in ("#fbe0cf",)
    colours = {light.pixel(x, y) for x in range(0, 540, 7) for y in range(0, 916, 7)}
    assert len(colours) > 20  # text, borders, fills, edges


def test_png_long_side_is_capped(sample, tmp_path):
    graph, layout = sample
    size = raster.svg_to_png(render_svg(graph, layout), str(tmp_path / "big.png"), dpi=9600, max_px=2000)
    assert max(size) == 2000
    image = read_png(tmp_path / "big.png")
    assert image.height() == 2000 and abs(image.width() - round(2000 * 540 / 916)) <= 1


def test_a_big_png_is_compressed_for_speed_and_reads_back_the_same(sample, tmp_path, monkeypatch):
    graph, layout = sample
    svg = render_svg(graph, layout)
    raster.svg_to_png(svg, str(tmp_path / "default.png"))
    monkeypatch.setattr(raster, "FAST_PNG_PIXELS", 1000)  # this small drawing counts as big
    raster.svg_to_png(svg, str(tmp_path / "fast.png"))
    fast, default = read_png(tmp_path / "fast.png"), read_png(tmp_path / "default.png")
    assert fast.size() == default.size() and fast == default  # lossless either way: Qt's writer, or ours by bands
    assert (fast.dotsPerMeterX(), fast.dotsPerMeterY()) == (default.dotsPerMeterX(), default.dotsPerMeterY())
    assert (tmp_path / "fast.png").stat().st_size != (tmp_path / "default.png").stat().st_size
    monkeypatch.setattr(raster, "PNG_BAND_ROWS", 7)  # bands that do not divide the height
    raster.svg_to_png(svg, str(tmp_path / "bands.png"))
    assert read_png(tmp_path / "bands.png") == default


def test_a_png_too_small_to_read_is_an_overview_painted_from_the_layout(sample, tmp_path, monkeypatch):
    from jaxscope import exporter as export_module

    graph, layout = sample
    via_svg: list[bool] = []
    real = export_module.render_svg
    monkeypatch.setattr(export_module, "render_svg", lambda *a, **kw: via_svg.append(True) or real(*a, **kw))
    export(graph, layout, str(tmp_path / "readable.png"))
    assert via_svg == [True]
    monkeypatch.setattr(export_module, "PNG_MAX_PX", 100)  # 916 px tall -> 100: labels 1.3 px high
    for theme in ("light", "dark"):
        export(graph, layout, str(tmp_path / f"tiny-{theme}.png"), theme=theme, highlight=frozenset({"e1"}))
    export(graph, layout, str(tmp_path / "tiny.pdf"))  # a PDF zooms: always through the labelled SVG
    assert via_svg == [True, True]
    svg_size = raster.svg_to_png(render_svg(graph, layout), str(tmp_path / "svg.png"), max_px=100)
    light, dark = read_png(tmp_path / "tiny-light.png"), read_png(tmp_path / "tiny-dark.png")
    assert (light.width(), light.height()) == svg_size  # the same canvas as the SVG's
    assert QtGui.QColor(light.pixel(1, 1)).name() == "#ffffff" and QtGui.QColor(dark.pixel(1, 1)).name() == "#16191e"
    colours = {QtGui.QColor(light.pixel(x, y)).name() for x in range(light.width()) for y in range(light.height())}
    assert len(colours) > 10  # clusters, boxes and edges were drawn
    export(graph, layout, str(tmp_path / "plain.png"))
    plain = read_png(tmp_path / "plain.png")
    changed = [
        (QtGui.QColor(light.pixel(x, y)), QtGui.QColor(plain.pixel(x, y)))
        for x in range(light.width())
        for y in range(light.height())
        if light.pixel(x, y) != plain.pixel(x, y)
    ]
    assert changed and all(hi.red() - hi.green() >= lo.red() - lo.green() for hi, lo in changed)  # a red outline


def test_png_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError):
        raster.svg_to_png("<svg", str(tmp_path / "x.png"))
    with pytest.raises(ValueError):
        raster.svg_to_png('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>', str(tmp_path / "x.png"), dpi=0)


def test_pdf(sample, tmp_path):
    graph, layout = sample
    raster.svg_to_pdf(render_svg(graph, layout), str(tmp_path / "g.pdf"), title="predict")
    data = (tmp_path / "g.pdf").read_bytes()
    assert data.startswith(b"%PDF")
    box = re.search(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", data)
    assert box is not None
    assert (float(box.group(1)), float(box.group(2))) == pytest.approx((405.0, 687.0))  # 540 x 916 px in points


def test_export_png_and_pdf(sample, hostile, tmp_path):
    graph, layout = sample
    assert export(graph, layout, str(tmp_path / "g.png"), dpi=144, title="T", legend=True) == "png"
    image = read_png(tmp_path / "g.png")
    assert image.width() == 810
    assert export(graph, layout, str(tmp_path / "g.pdf"), theme="dark") == "pdf"
    assert (tmp_path / "g.pdf").read_bytes().startswith(b"%PDF")
    assert export(graph, layout, str(tmp_path / "out"), fmt="png") == "png"
    hg, hl = hostile
    export(hg, hl, str(tmp_path / "h.png"))
    assert not read_png(tmp_path / "h.png").isNull()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.pdf", "g.png", "h.png", "out"]


def test_png_is_deterministic(sample, tmp_path):
    graph, layout = sample
    svg = render_svg(graph, layout, legend=True)
    raster.svg_to_png(svg, str(tmp_path / "a.png"))
    raster.svg_to_png(svg, str(tmp_path / "b.png"))
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()


def test_font_lists_are_narrowed_for_qtsvg():
    raster.ensure_app()
    text = raster.narrow_font_lists('<svg font-family="No Such Font, DejaVu Sans Mono, monospace"><text font-family="x, monospace"/></svg>')
    assert 'font-family="DejaVu Sans Mono"' in text or 'font-family="monospace"' in text
    assert 'font-family="monospace"' in text
    assert raster.narrow_font_lists('<svg font-family="Single"/>') == '<svg font-family="Single"/>'


def test_headless_export_sets_offscreen_itself(tmp_path):
    """No DISPLAY, no QT_QPA_PLATFORM: raster must pick offscreen instead of letting Qt abort."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    code = (
        "import os, sys; from jaxscope.qt.graph.raster import svg_to_png;"
        'svg_to_png(\'<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10">'
        '<text x="1" y="9">hi</text></svg>\', sys.argv[1]);'
        "print('platform', os.environ.get('QT_QPA_PLATFORM'))"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "g.png")], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "platform offscreen" in proc.stdout
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"

"""A laid-out graph as SVG or DOT text, with its styles; raster formats go through `jaxscope.exporter`."""

"""The interactive graph: the view, its scene model and batched tile items, and the raster export
(`raster`: the one place the exporter reaches Qt)."""

"""The PySide6 side of jaxscope: raster export now, the desktop app later (the only package that imports Qt)."""

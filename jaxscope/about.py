"""The version and where the package lies on disk: a leaf module, so that code needing them never
imports the `jaxscope` package's lazy API (which would tie every importer to `jaxscope.api`)."""

from __future__ import annotations

import os

__version__ = "0.1.0"

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))  # .../jaxscope
SOURCE_ROOT = os.path.dirname(PACKAGE_DIR)  # the folder holding the package (a checkout's root when installed -e)
EXAMPLES_DIR = os.path.join(SOURCE_ROOT, "examples")

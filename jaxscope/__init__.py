"""jaxscope: see what JAX does to a Python function.

Importing the package is cheap on purpose: it pulls in neither jax nor Qt.
"""

__version__ = "0.1.0"

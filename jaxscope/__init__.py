"""jaxscope: see what JAX does to a Python function.

Importing the package is cheap on purpose: it pulls in neither jax nor Qt.
"""

from jaxscope.about import __version__ as __version__

__all__ = ["GraphImage", "JaxscopeError", "SavedTrace", "TraceDiff", "diff", "export", "graph", "load", "run", "show"]
_API = frozenset(__all__) - {"run"}


def __getattr__(name: str) -> object:
    """`jaxscope.export` / `graph` / `show` / `load` / `diff` load `jaxscope.api` (and `run`, `jaxscope.api_run`) on
    first use, keeping this import cheap."""
    if name == "run":
        from jaxscope.api_run import run

        return run
    if name in _API:
        from jaxscope import api

        return getattr(api, name)
    raise AttributeError(f"module 'jaxscope' has no attribute {name!r}")

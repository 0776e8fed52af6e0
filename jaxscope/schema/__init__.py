"""Plain frozen dataclasses and their codecs: the data every other package passes around.

Imports no other jaxscope package, neither jax nor Qt.
"""

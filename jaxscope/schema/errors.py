"""The one base of the errors jaxscope raises on purpose (`jaxscope.JaxscopeError`): catch it to
catch any of them. Each subclass's docstring says what causes it and what the user can do; `code`
is the command line's exit code when one ends a command (2: bad usage or input; 3: the user's
code failed; 4: a time limit; 5: a crash). Subclasses keep the built-in bases callers caught
before (`ValueError`, `OSError`, ...)."""

from __future__ import annotations


class JaxscopeError(Exception):
    """Something jaxscope was asked to do and could not, said in a sentence for the user."""

    code: int = 2

    def __init__(self, *args: object, code: int | None = None) -> None:
        super().__init__(*args)
        if code is not None:
            self.code = code

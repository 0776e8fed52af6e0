"""Parse a target naming the function to trace: ``path/to/file.py::name`` or ``pkg.module:name``."""

from __future__ import annotations

import keyword

from jaxscope.schema.errors import JaxscopeError
from jaxscope.schema.trace import FunctionRef

TARGET_FORMS = """\
accepted forms:
  path/to/file.py::function        a function in a file (also path/to/file.py::Class.method)
  package.module:function          a function in an importable module"""


class TargetError(JaxscopeError, ValueError):
    """A target that names no function; the message quotes the input and lists the accepted forms
    (`file.py::function`, `package.module:function`, a saved `NAME.jaxscope`)."""

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"invalid target {text!r}: {reason}\n{TARGET_FORMS}")
        self.text = text
        self.reason = reason

    def __reduce__(self) -> tuple[type[TargetError], tuple[str, str]]:
        return (type(self), (self.text, self.reason))


def parse_target(text: str) -> FunctionRef:
    """``file.py::name`` (split on the rightmost ``::``; path kept as given) or ``module:name``."""
    if "::" in text:
        path, name = text.rsplit("::", 1)
        if not path:
            raise TargetError(text, "the file path before '::' is empty")
        _check_dotted(text, name, "function name")
        return FunctionRef(qualname=name, path=path)
    if ":" in text:
        module, name = text.split(":", 1)
        if module.endswith(".py") or any(sep in text for sep in "/\\"):
            raise TargetError(text, "this looks like a file path: separate the file and the function with '::'")
        _check_dotted(text, module, "module name")
        _check_dotted(text, name, "function name")
        return FunctionRef(qualname=name, module=module)
    if not text:
        raise TargetError(text, "it is empty")
    hint = f"; did you mean {text}::function?" if text.endswith(".py") else ""
    raise TargetError(text, f"it names no function (no '::' or ':'){hint}")


def _check_dotted(text: str, name: str, what: str) -> None:
    """`name` must be dotted Python identifiers, e.g. ``Class.method`` or ``pkg.module``."""
    if not name:
        raise TargetError(text, f"the {what} is empty")
    for part in name.split("."):
        if not part.isidentifier() or keyword.iskeyword(part):
            inner = f" ({part!r} is not a Python identifier)" if part != name else ""
            raise TargetError(text, f"{name!r} is not a valid {what}{inner}")

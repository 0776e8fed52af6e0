"""The one base of the errors jaxscope raises on purpose (`jaxscope.JaxscopeError`): catch it to
catch any of them. Each subclass's docstring says what causes it and what the user can do; `code`
is the command line's exit code when one ends a command (2: bad usage or input; 3: the user's
code failed; 4: a time limit; 5: a crash). Subclasses keep the built-in bases callers caught
before (`ValueError`, `OSError`, ...).

Each class lives beside its cause; this table lists them all (a test holds it to the code). A
command line's failure is a `SessionError` chained `from` the typed error it was made of; the
Python API raises that typed error itself (`SessionError.raise_typed`), its fields kept.

| class | module | raised when |
| --- | --- | --- |
| `NotAFileError` | `schema.files` | a path names no regular file, or one too big for its purpose |
| `CheckError` | `schema.trace_file_check` | a saved trace's JSON breaks the format (`where`: the field) |
| `DocumentError` | `schema.trace_file` | a file is no trace document this jaxscope reads |
| `SpecError` | `targets.argspec` | an `--args` spec does not parse (`offset`, `token`) |
| `TargetError` | `targets.target` | a target names no function |
| `DiscoveryError` | `targets.discover` | the user's file cannot be read or parsed (`line`, `col`) |
| `ArgValueError` | `targets.argvalues` | example inputs have no `--args` form and cannot be handed over |
| `LayoutError` | `layout.wire` | the layout process failed on a graph |
| `InterpreterError` | `runtime.interpreter` | the Python given for the user's code cannot run the worker |
| `WorkerError` | `runtime.worker_client` | a request to the worker failed (`info`: kind, phase, where, hint) |
| `TraceError` | `worker.errors` | inside the worker: the user's code failed (its `info`) |
| `LoadError` | `worker.load` | inside the worker: a file, module or function did not load |
| `SessionError` | `session` | a command cannot go on: the sentence and exit code for one of the above |
| `CliError` | `cli.common` | a command's bad usage (an option's value, an unwritable output) |
"""

from __future__ import annotations


class JaxscopeError(Exception):
    """Something jaxscope was asked to do and could not, said in a sentence for the user."""

    code: int = 2

    def __init__(self, *args: object, code: int | None = None) -> None:
        super().__init__(*args)
        if code is not None:
            self.code = code

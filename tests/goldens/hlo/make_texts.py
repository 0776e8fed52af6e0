"""Regenerate the golden IR texts from real jax (run by hand; the tests only read the texts).

    .venv/bin/python tests/goldens/hlo/make_texts.py

For each case in hlo_subject.CASES it writes `<case>.stablehlo.mlir` (Lowered.as_text with
debug_info=True) and `<case>.hlo.txt` (Compiled.as_text). The subject's absolute path (and
its directory, and this checkout's root) are replaced by stable placeholders so the goldens do
not depend on where the repository lives: the subject becomes `/src/hlo_subject.py`.
"""

from __future__ import annotations

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
PLACEHOLDER = "/src/hlo_subject.py"


def stabilize(text: str, subject: str) -> str:
    """Replace checkout-specific paths with placeholders; the jax paths stay as printed."""
    text = text.replace(subject, PLACEHOLDER)
    root = str(HERE.parents[2])
    return text.replace(root + "/", "/repo/")


def main() -> None:
    sys.dont_write_bytecode = True  # no __pycache__ next to the goldens
    sys.path.insert(0, str(HERE))
    import hlo_subject
    import jax

    subject = str(pathlib.Path(hlo_subject.__file__).resolve())
    for name, (fn, args) in hlo_subject.CASES.items():
        lowered = jax.jit(fn).lower(*args)
        stable = stabilize(lowered.as_text(debug_info=True), subject)
        hlo = stabilize(lowered.compile().as_text(), subject)
        (HERE / f"{name}.stablehlo.mlir").write_text(stable, encoding="utf-8")
        (HERE / f"{name}.hlo.txt").write_text(hlo, encoding="utf-8")
        print(f"{name}: {len(stable.splitlines())} StableHLO lines, {len(hlo.splitlines())} HLO lines")
    print("jax", jax.__version__)


if __name__ == "__main__":
    main()

"""What the user singled out in the graph view: the selection, the last search and its matches,
and the dataflow cone shown. Kept as base paths, which survive a re-layout (the view carries them
over to the next scene), and answered as the record indices of the scene model shown. No Qt
painting here: the view applies the answers to its `ViewState` and repaints."""

from __future__ import annotations

from collections.abc import Iterable

from jaxscope.analysis.graph_query import Dataflow, SearchIndex
from jaxscope.qt.graph.scene_model import SceneModel


class Focus:
    """See the module docstring. The look-ups over a model (`dataflow`, the search index) are
    built on first use and dropped by `forget_model` when another model is shown."""

    def __init__(self) -> None:
        self.selected: dict[str, None] = {}  # base paths, in selection order
        self.search_text = ""
        self.matches: list[str] = []  # the last search's base paths, layout order
        self.match_index = -1  # the match shown (`step`), or -1
        self.highlight: tuple[str, str] | None = None  # (path, direction) of the dataflow cone shown
        self._dataflow: Dataflow | None = None
        self._index: SearchIndex | None = None

    def forget_model(self) -> None:
        self._dataflow = None
        self._index = None

    @property
    def carries_over(self) -> bool:
        """Whether anything here needs the next model's look-ups (`SceneModel.warm(lookups=...)`)."""
        return bool(self.selected or self.highlight or self.search_text)

    @property
    def current_match(self) -> str | None:
        return self.matches[self.match_index] if self.match_index >= 0 else None

    @staticmethod
    def records_of(model: SceneModel | None, paths: Iterable[str]) -> set[int]:
        """The record indices of the boxes drawn for these base paths (stub copies too)."""
        return {i for p in paths for i in model.by_base.get(p, ())} if model is not None else set()

    def clicked(self, base: str | None, ctrl: bool, shift: bool) -> list[str] | None:
        """The selection after a click on the node `base` (None: on nothing): Ctrl toggles it,
        Ctrl or Shift adds it, a plain click selects it alone or (on nothing) clears; None when
        the selection stays."""
        if base is None:
            return None if ctrl or shift else []
        paths = list(self.selected)
        if ctrl and base in self.selected:
            paths.remove(base)
        elif ctrl or shift:
            if base not in self.selected:
                paths.append(base)
        else:
            paths = [base]
        return paths

    # -- dataflow

    def dataflow(self, model: SceneModel | None) -> Dataflow:
        """The visible dataflow (stubs folded into their node), built once per model."""
        if self._dataflow is None:
            self._dataflow = Dataflow(model.by_base if model else (), model.edge_ends() if model else ())
        return self._dataflow

    def cone(self, model: SceneModel | None, path: str, direction: str) -> set[str]:
        """Base paths of the drawn nodes `path` depends on ("up"), that depend on it ("down"), or both."""
        up, down = self.dataflow(model).cones(path, direction)
        return {p for p in up | down if model is not None and p in model.by_base}

    def cone_records(self, model: SceneModel | None, path: str, direction: str) -> tuple[set[int], set[int]] | None:
        """The records and edge indices of `path`'s dataflow cone, or None when it has none."""
        up, down = self.dataflow(model).cones(path, direction)
        if model is None or not (up or down):
            return None
        edges = {j for j, (src, dst) in enumerate(model.edge_ends()) if (src in up and dst in up) or (src in down and dst in down)}
        return self.records_of(model, up | down), edges

    # -- search

    def search(self, model: SceneModel | None, text: str) -> set[int]:
        """Search the drawn nodes (`SearchIndex.search`): the matches become `matches` (none shown
        yet); returns their records."""
        self.search_text = text.strip()
        if model is not None and self._index is None:
            self._index = SearchIndex((base, model.nodes[i].node) for base, i in model.by_base.firsts())
        self.matches = self._index.search(text) if model is not None and self._index is not None else []
        self.match_index = -1
        return self.records_of(model, self.matches)

    def step(self, step: int) -> str | None:
        """The next (`step` > 0) or previous match, cyclically; None without matches."""
        if not self.matches:
            return None
        n = len(self.matches)
        self.match_index = (0 if step > 0 else n - 1) if self.match_index < 0 else (self.match_index + step) % n
        return self.matches[self.match_index]

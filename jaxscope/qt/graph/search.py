"""The graph view's search: what the search bar (Ctrl+F) finds, outlined, walked one by one, each
centred and readable in turn."""

from __future__ import annotations

from collections.abc import Iterable

from jaxscope.qt.graph.batch_item import ViewState
from jaxscope.qt.graph.focus import Focus
from jaxscope.qt.graph.scene_model import SceneModel
from jaxscope.qt.graph.zoom_pan import ZoomPanView


class GraphSearch(ZoomPanView):
    """`QtGraphView`'s search, over its model and state (which it owns)."""

    focus: Focus
    _model: SceneModel | None
    _state: ViewState

    def select_paths(self, paths: Iterable[str], center: bool = True) -> None:
        raise NotImplementedError

    def _update_nodes(self, ids: Iterable[int]) -> None:
        raise NotImplementedError

    def search(self, text: str) -> list[str]:
        """Base paths (layout order) whose label, avals or ``file:line`` contain `text`
        (case-insensitive); ``:12`` or ``line 12`` match line 12 exactly, ``model.py:12`` that
        line in a matching file. The matches are outlined; `next_match` walks them."""
        ids = self.focus.search(self._model, text)
        changed = ids ^ self._state.matches
        self._state.matches = ids
        self._update_nodes(changed)
        return list(self.focus.matches)

    @property
    def match_count(self) -> int:
        return len(self.focus.matches)

    @property
    def current_match_index(self) -> int:
        """Index into the last search's matches of the one shown, or -1."""
        return self.focus.match_index

    def next_match(self) -> str | None:
        return self._step_match(+1)

    def previous_match(self) -> str | None:
        return self._step_match(-1)

    def _step_match(self, step: int) -> str | None:
        path = self.focus.step(step)
        if path is not None:
            self.select_paths([path], center=False)
            self._centre_on(path)
        return path

    def _centre_on(self, path: str) -> None:
        """Centre the box of `path` nearest to the view's centre (an input may have many copies)."""
        model = self._model
        assert model is not None
        here = self._view_centre()
        rects = [model.nodes[i].rect for i in model.by_base[path]]
        best = min(rects, key=lambda r: (r.center() - here).manhattanLength())
        self.reveal_rect(best)  # centred, and readable when the view was too far out

import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before anything imports Qt

import pathlib

import pytest

from jaxscope.layout import labels
from jaxscope.schema.graph import Body, Edge, Graph, Node, SourceLoc, SubgraphRef, resolve
from jaxscope.schema.layout import ClusterBox, EdgePath, Layout, NodeBox

GOLDENS = pathlib.Path(__file__).resolve().parent / "goldens"


MODELS = pathlib.Path(__file__).resolve().parent / "worker" / "corpus" / "models.py"  # real models with makers


def load_models(name: str = "models_for_reference"):
    """The real-models corpus, imported in this process (as a user's own script would run it)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, MODELS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_golden(name: str, text: str) -> None:
    """Compare `text` with tests/goldens/`name`; JAXSCOPE_UPDATE_GOLDENS=1 rewrites it instead."""
    path = GOLDENS / name
    if os.environ.get("JAXSCOPE_UPDATE_GOLDENS") == "1":
        GOLDENS.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        return
    assert path.exists(), f"missing golden {path}; run with JAXSCOPE_UPDATE_GOLDENS=1"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} differs from its golden; if intended, rerun with JAXSCOPE_UPDATE_GOLDENS=1"


def two_chains(n: int = 200, span: int = 40) -> Graph:
    """Two chains side by side, the right one also reading the left one `span` steps back: n - span
    long edges crossing between the columns, where nothing else is drawn."""
    nodes = [Node("in0", "input", "x", avals=("f32[8]",))]
    edges = []
    for side in "lr":
        for i in range(n):
            nodes.append(Node(f"{side}{i}", "eqn", "add" if side == "l" else "mul", avals=("f32[8]",)))
            edges.append(Edge(f"{side}{i - 1}" if i else "in0", f"{side}{i}", 0, 0))
    edges += [Edge(f"l{i}", f"r{i + span}", 0, 1) for i in range(n - span)]
    return Graph("two", {"b0": Body("b0", "two", tuple(nodes), tuple(edges), 2 * n, 2 * n)})


def chain_with_owner(n: int = 2400) -> tuple[Graph, str]:
    """A chain of `n` sin equations with a `jit` of a two-equation block in the middle."""
    k = n // 2
    nodes = [Node("in0", "input", "x", ("f32[4]",))]
    edges = []
    for i in range(n):
        src = "in0" if i == 0 else f"e{i - 1}"
        if i == k:
            nodes.append(Node(f"e{i}", "eqn", "jit", ("f32[4]",), ("f32[4]",), subgraphs=(SubgraphRef("jit(blk)", "b1", "jaxpr"),)))
        else:
            nodes.append(Node(f"e{i}", "eqn", "sin", ("f32[4]",), ("f32[4]",)))
        edges.append(Edge(src, f"e{i}", 0, 0, "f32[4]"))
    nodes.append(Node("out0", "output", "out", ("f32[4]",)))
    edges.append(Edge(f"e{n - 1}", "out0", 0, 0, "f32[4]"))
    blk = Body(
        "b1",
        "blk",
        (
            Node("in0", "input", "x", ("f32[4]",)),
            Node("e0", "eqn", "cos", ("f32[4]",), ("f32[4]",)),
            Node("e1", "eqn", "exp", ("f32[4]",), ("f32[4]",)),
            Node("out0", "output", "out", ("f32[4]",)),
        ),
        (Edge("in0", "e0", 0, 0, "f32[4]"), Edge("e0", "e1", 0, 0, "f32[4]"), Edge("e1", "out0", 0, 0, "f32[4]")),
        2,
        2,
    )
    top = Body("b0", "chain", tuple(nodes), tuple(edges), n, n + 2)
    return Graph("chain", {"b0": top, "b1": blk}, "b0"), f"e{k}"


def _src(line: int, fn: str = "predict") -> SourceLoc:
    return SourceLoc(file="/home/user/project/model.py", line=line, col=4, function=fn)


def build_sample() -> tuple[Graph, Layout]:
    """A hand-built predict-like graph (19 boxes, one expanded `jit` cluster) and a fixed layout.

    Independent of the layout engine: positions are written here, sizes come from labels.
    """
    inner = Body(
        id="b1",
        title="jit(layer)",
        nodes=(
            Node("in0", "input", "x", avals=("f32[16,4]",)),
            Node("in1", "input", "w", avals=("f32[4,8]",)),
            Node("in2", "input", "b", avals=("f32[8]",)),
            Node(
                "e0",
                "eqn",
                "dot_general",
                avals=("f32[16,8]",),
                in_avals=("f32[16,4]", "f32[4,8]"),
                params=(("dimension_numbers", "(([1], [0]), ([], []))"), ("precision", "None")),
                numbers=(("lhs_batch", ()), ("lhs_contracting", (1,)), ("rhs_batch", ()), ("rhs_contracting", (0,))),
                source=_src(20, "layer"),
                name_stack="jit(layer)",
            ),
            Node("e1", "eqn", "add", avals=("f32[16,8]",), in_avals=("f32[16,8]", "f32[8]"), source=_src(20, "layer")),
            Node("e2", "eqn", "tanh", avals=("f32[16,8]",), in_avals=("f32[16,8]",), source=_src(20, "layer")),
            Node("out0", "output", "out", avals=("f32[16,8]",)),
        ),
        edges=(
            Edge("in0", "e0", 0, 0, "f32[16,4]"),
            Edge("in1", "e0", 0, 1, "f32[4,8]"),
            Edge("e0", "e1", 0, 0, "f32[16,8]"),
            Edge("in2", "e1", 0, 1, "f32[8]"),
            Edge("e1", "e2", 0, 0, "f32[16,8]"),
            Edge("e2", "out0", 0, 0, "f32[16,8]"),
        ),
        n_eqns=3,
        total_eqns=3,
    )
    top = Body(
        id="b0",
        title="predict",
        nodes=(
            Node("in0", "input", "x", avals=("f32[16,4]",)),
            Node("in1", "input", "params['w1']", avals=("f32[4,8]",)),
            Node("in2", "input", "params['b1']", avals=("f32[8]",)),
            Node("in3", "input", "params['w2']", avals=("f32[8,3]",)),
            Node("c0", "const", "scale", avals=("f32[3]",), detail="module global `scale`"),
            Node(
                "e0",
                "eqn",
                "jit",
                avals=("f32[16,8]",),
                in_avals=("f32[16,4]", "f32[4,8]", "f32[8]"),
                params=(("name", "layer"),),
                source=_src(25),
                subgraphs=(SubgraphRef("jit(layer)", "b1", "jaxpr"),),
            ),
            Node("e1", "eqn", "dot_general", avals=("f32[16,3]",), in_avals=("f32[16,8]", "f32[8,3]"), source=_src(26)),
            Node("e2.l1", "literal", "2.0"),
            Node("e2", "eqn", "mul", avals=("f32[16,3]",), source=_src(27)),
            Node("e3", "eqn", "add", avals=("f32[16,3]",), source=_src(28)),
            Node("e4", "eqn", "reduce_max", avals=("f32[16]",), params=(("axes", "(1,)"),), source=_src(29)),
            Node("e5", "eqn", "sub", avals=("f32[16,3]",), source=_src(29)),
            Node("e6", "eqn", "exp", avals=("f32[16,3]",), source=_src(29)),
            Node("out0", "output", "result", avals=("f32[16,3]",)),
        ),
        edges=(
            Edge("in0", "e0", 0, 0),
            Edge("in1", "e0", 0, 1),
            Edge("in2", "e0", 0, 2),
            Edge("e0", "e1", 0, 0),
            Edge("in3", "e1", 0, 1),
            Edge("e1", "e2", 0, 0),
            Edge("e2.l1", "e2", 0, 1),
            Edge("e2", "e3", 0, 0),
            Edge("c0", "e3", 0, 1),
            Edge("e3", "e4", 0, 0),
            Edge("e3", "e5", 0, 0),
            Edge("e4", "e5", 0, 1),
            Edge("e5", "e6", 0, 0),
            Edge("e6", "out0", 0, 0),
        ),
        n_eqns=7,
        total_eqns=9,
    )
    graph = Graph(function="predict", bodies={"b0": top, "b1": inner})

    centres = {  # path -> centre
        "in0": (70.0, 30.0),
        "in1": (200.0, 30.0),
        "in2": (330.0, 30.0),
        "e0:0/in0": (70.0, 110.0),
        "e0:0/in1": (200.0, 110.0),
        "e0:0/in2": (330.0, 110.0),
        "e0:0/e0": (135.0, 170.0),
        "e0:0/e1": (230.0, 230.0),
        "e0:0/e2": (230.0, 290.0),
        "e0:0/out0": (230.0, 350.0),
        "in3#0": (330.0, 420.0),
        "e1": (230.0, 470.0),
        "e2.l1": (340.0, 520.0),
        "e2": (230.0, 560.0),
        "c0": (340.0, 610.0),
        "e3": (230.0, 650.0),
        "e4": (130.0, 710.0),
        "e5": (230.0, 770.0),
        "e6": (230.0, 830.0),
        "out0": (230.0, 890.0),
        "in3": (460.0, 30.0),
    }
    boxes = []
    for path, (x, y) in centres.items():
        w, h = labels.node_size(resolve(graph, path.partition("#")[0])[1])
        boxes.append(NodeBox(path, x, y, round(w, 1), round(h, 1)))
    by_path = {b.path: b for b in boxes}

    def edge(src: str, dst: str, aval: str = "", routed: bool = True) -> EdgePath:
        a, b = by_path[src], by_path[dst]
        p0, p3 = (a.x, a.y + a.h / 2), (b.x, b.y - b.h / 2)
        d = max((p3[1] - p0[1]) / 2, 12.0)
        return EdgePath(src, dst, (p0, (p0[0], p0[1] + d), (p3[0], p3[1] - d), p3), routed, aval)

    edges = (
        edge("in0", "e0:0/in0", "f32[16,4]"),
        edge("in1", "e0:0/in1", "f32[4,8]"),
        edge("in2", "e0:0/in2", "f32[8]"),
        edge("e0:0/in0", "e0:0/e0", "f32[16,4]"),
        edge("e0:0/in1", "e0:0/e0", "f32[4,8]"),
        edge("e0:0/e0", "e0:0/e1", "f32[16,8]"),
        edge("e0:0/in2", "e0:0/e1", "f32[8]"),
        edge("e0:0/e1", "e0:0/e2", "f32[16,8]"),
        edge("e0:0/e2", "e0:0/out0", "f32[16,8]"),
        edge("e0:0/out0", "e1", "f32[16,8]"),
        edge("in3#0", "e1", "f32[8,3]"),
        edge("e1", "e2", "f32[16,3]"),
        edge("e2.l1", "e2"),
        edge("e2", "e3", "f32[16,3]"),
        edge("c0", "e3", "f32[3]"),
        edge("e3", "e4", "f32[16,3]"),
        edge("e3", "e5", "f32[16,3]", routed=False),
        edge("e4", "e5", "f32[16]"),
        edge("e5", "e6", "f32[16,3]"),
        edge("e6", "out0", "f32[16,3]"),
    )
    cluster = ClusterBox("e0:0", "jit(layer)", x=14.0, y=62.0, w=376.0, h=316.0, depth=1)
    layout = Layout(width=540.0, height=916.0, nodes=tuple(boxes), edges=edges, clusters=(cluster,), engine="hand")
    return graph, layout


HOSTILE = (
    "<script>alert(1)</script>",
    "name=\\N",
    "\\l",
    "\\G",
    "trailing\\",
    'say "hi"',
    "a\x00b",
    "a\x01b",
    "x\u202eevil",
    "L" * 300,
    "函数",
    "emoji 🙂",
    "&amp; & <b>x</b>",
    "it's",
    "lone\ud800",
    "nel\x85",
)


def build_hostile() -> tuple[Graph, Layout]:
    """Every HOSTILE string as a node label, a param, an aval, a source file, a cluster title and
    the function name, in a body with one expanded sub-graph."""
    inner_nodes = tuple(Node(f"in{i}", "input", s, avals=(s,)) for i, s in enumerate(HOSTILE[:3]))
    inner = Body("b1", HOSTILE[0], inner_nodes, (), 0, 0)
    nodes = [
        Node(
            f"e{i}",
            "eqn",
            s,
            avals=("f32[2]",),
            params=(("name", s), (s, s)),
            source=SourceLoc(file=s, line=i + 1, function=s),
            name_stack=s,
            detail=s,
        )
        for i, s in enumerate(HOSTILE)
    ]
    nodes.append(Node("c0", "const", HOSTILE[1], avals=(HOSTILE[4],)))
    nodes.append(Node("e0.l1", "literal", HOSTILE[5]))
    nodes.append(Node("o", "eqn", "jit", params=(("name", HOSTILE[2]),), subgraphs=(SubgraphRef(HOSTILE[3], "b1"),)))
    edges = tuple(Edge(f"e{i}", f"e{i + 1}", aval=HOSTILE[i]) for i in range(len(HOSTILE) - 1))
    top = Body("b0", "top", tuple(nodes), edges, len(nodes), len(nodes))
    graph = Graph(function=HOSTILE[0] + HOSTILE[8], bodies={"b0": top, "b1": inner})

    boxes = []
    y = 20.0
    for node in nodes:
        if node.id == "o":
            continue
        w, h = labels.node_size(node)
        boxes.append(NodeBox(node.id, 20.0 + w / 2, y + h / 2, round(w, 1), h))
        y += h + 20.0
    cy = y
    for node in inner_nodes:
        w, h = labels.node_size(node)
        boxes.append(NodeBox(f"o:0/{node.id}", 30.0 + w / 2, y + labels.TITLE_H + 10 + h / 2, round(w, 1), h))
        y += h + 20.0 + labels.TITLE_H
    cluster = ClusterBox("o:0", HOSTILE[3] + HOSTILE[0], 10.0, cy, 340.0, y - cy + 20.0, 1)
    by = {b.path: b for b in boxes}
    paths = []
    for i, e in enumerate(edges):
        a, b = by[e.src], by[e.dst]
        paths.append(EdgePath(e.src, e.dst, ((a.x, a.y + a.h / 2), (b.x, b.y - b.h / 2)), routed=i % 2 == 0, aval=e.aval))
    paths.append(EdgePath(HOSTILE[0], "o:0", ((5.0, 5.0), (6.0, cy)), aval=HOSTILE[0]))
    layout = Layout(width=360.0, height=y + 40.0, nodes=tuple(boxes), edges=tuple(paths), clusters=(cluster,))
    return graph, layout


@pytest.fixture
def sample() -> tuple[Graph, Layout]:
    return build_sample()


@pytest.fixture
def hostile() -> tuple[Graph, Layout]:
    return build_hostile()


def merge_tokens(tokens: list[tuple[object, str]]) -> list[tuple[object, str]]:
    """Pygments tokens with neighbours of one type joined and empty ones dropped: two lexings of
    one text compare equal however the lexer happened to split them."""
    out: list[tuple[object, str]] = []
    for t, v in tokens:
        if out and out[-1][0] is t:
            out[-1] = (t, out[-1][1] + v)
        elif v:
            out.append((t, v))
    return out


CORPUS = pathlib.Path(__file__).resolve().parent / "worker" / "corpus"


def run_cli(*args: str, cwd: str | os.PathLike[str] | None = None, timeout: float = 180):
    """`python -m jaxscope ARGS` in a child, as a user runs it (offscreen Qt, the repository as cwd):
    for what only a process of its own shows (the entry point, signals, exit, its environment)."""
    import subprocess
    import sys

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    where = cwd if cwd is not None else pathlib.Path(__file__).resolve().parents[1]
    return subprocess.run([sys.executable, "-m", "jaxscope", *args], capture_output=True, text=True, timeout=timeout, cwd=where, env=env)


def cli_in_process(*args: str, cwd: str | os.PathLike[str] | None = None):
    """`jaxscope ARGS` run by `jaxscope.cli.main.main` in this process, in `cwd` (the repository by
    default): the same parser, dispatch, printing and exit code as a user's run, without a Python of
    its own to start. Inside `shared_workers()` (tests/cli's modules hold one each) its commands
    share their worker, as a command's stages do. A `subprocess.CompletedProcess` like `run_cli`'s."""
    import contextlib
    import io
    import signal
    import subprocess

    from jaxscope.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    here, on_term = os.getcwd(), signal.getsignal(signal.SIGTERM)
    os.chdir(cwd if cwd is not None else pathlib.Path(__file__).resolve().parents[1])
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # the parser's usage errors (2) and --help (0)
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        os.chdir(here)
        signal.signal(signal.SIGTERM, on_term)  # main sets its own for the command
    return subprocess.CompletedProcess(["jaxscope", *args], code, out.getvalue(), err.getvalue())


# Skips a run may have, each with why it is fine; under JAXSCOPE_STRICT_SKIPS=1 (as `.ci/run` sets it) any
# other skip fails the run: a declared dependency that is missing must not silently drop tests.
ALLOWED_SKIPS = {
    "sys.monitoring is Python 3.12+": "the 3.12+ flow recorder; CI runs it under `make test-jax` (Python 3.13)",
}
_skipped: list[tuple[str, str]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and isinstance(report.longrepr, tuple):
        _skipped.append((report.nodeid, str(report.longrepr[2]).removeprefix("Skipped: ")))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("JAXSCOPE_STRICT_SKIPS") != "1":
        return
    unexpected = [(node, reason) for node, reason in _skipped if reason not in ALLOWED_SKIPS]
    if unexpected:
        lines = "\n".join(f"  {node}: {reason}" for node, reason in unexpected)
        print(f"\nskips not on tests/conftest.py's ALLOWED_SKIPS (a missing dependency?):\n{lines}", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def line_in(source: str | os.PathLike[str], fragment: str, nth: int = 0, *, unique: bool = False, ending: bool = False) -> int:
    """The 1-based line of `source` (a text, or a file's path) holding `fragment` (its `nth` hit;
    `unique`: the only one; `ending`: a line that ends with it, as a ``# marker`` comment does)."""
    text = pathlib.Path(source).read_text(encoding="utf-8") if isinstance(source, os.PathLike) else source
    hits = [i for i, line in enumerate(text.split("\n"), 1) if (line.rstrip().endswith(fragment) if ending else fragment in line)]
    assert hits and (not unique or len(hits) == 1), (fragment, hits)
    return hits[nth]

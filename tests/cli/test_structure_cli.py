"""Issue 49: the structure of real models, drawn by `jaxscope export` with no options as the window
opens them: an nnx ViT step under `@nnx.jit`, an equinox stack scanned under `jax.checkpoint`, a
linen `nn.scan` + `nn.remat` transformer (corpus files written as their libraries' docs write them)."""

from __future__ import annotations

import pathlib
import re
import xml.dom.minidom

import jaxscope
from tests.conftest import CORPUS
from tests.conftest import cli_in_process as run_cli

WRAPPER = re.compile(r"with_extra_args_support|(^|[ .])_[^_]")  # a library's internal wrapper named as a group


def _exported_with_no_options(tmp_path: pathlib.Path, name: str) -> dict[str, str]:
    """The boxes of the corpus file's `train_step` exported to SVG with no option: at most 150."""
    out = tmp_path / "vit.svg"
    done = run_cli("export", f"{CORPUS / name}::train_step", "-o", str(out))
    assert done.returncode == 0, done.stderr
    svg = out.read_text(encoding="utf-8")
    assert svg.count('class="node ') <= 150
    return _boxes(svg)


def _boxes(svg: str) -> dict[str, str]:
    """Drawn path -> its box's title, for every node and cluster of an exported SVG."""
    doc = xml.dom.minidom.parseString(svg)
    out = {}
    for g in doc.getElementsByTagName("g"):
        titles = g.getElementsByTagName("title")
        if g.getAttribute("data-path") and titles and titles[0].firstChild is not None:
            out[g.getAttribute("data-path")] = titles[0].firstChild.data.split("\n")[0].split("  (")[0].strip()
    return out


def test_an_nnx_vit_step_exported_with_no_options_draws_its_encoder_blocks_in_both_passes(tmp_path) -> None:
    boxes = _exported_with_no_options(tmp_path, "nnx_vit.py")
    titles = set(boxes.values())
    forward = next(p for p, t in boxes.items() if t == "train_step.loss_fn (forward)")
    backward = next(p for p, t in boxes.items() if t == "train_step.loss_fn (backward)")
    for k in range(4):  # every block a box, named by its attribute path, inside each pass
        named = [p for p, t in boxes.items() if t == f"encoder.layers[{k}] (4 alike)"]
        assert {p.split(":")[0] for p in named} == {forward.split(":")[0], backward.split(":")[0]}, (k, named)
    assert "flax: Optimizer.update" in titles and "flax: MultiMetric.update" in titles
    assert not [t for t in titles if WRAPPER.search(t)]


def test_equinox_modules_sit_under_their_caller_named_by_attribute() -> None:
    image = jaxscope.graph(f"{CORPUS / 'eqx_scan.py'}::train_step")
    view = image.graph
    top = {n.label: n for n in view.top.nodes}
    assert not [t for t in top if t.startswith("eqx.nn.")]  # equinox's class-tag scopes are no top-level groups
    forward = view.bodies[top["train_step.loss_fn (forward)"].subgraphs[0].body]
    model = next(n for n in forward.nodes if n.label == "Model.__call__")
    inside = {n.label for n in view.bodies[model.subgraphs[0].body].nodes}
    assert {"embed", "head", "scan"} <= inside  # eqx.nn.Linear calls named by their attribute, the scan beside them
    assert not [t for t in top if WRAPPER.search(t)]


def test_a_linen_model_is_a_group_inside_the_loss_that_applies_it() -> None:
    image = jaxscope.graph(f"{CORPUS / 'linen_scan.py'}::train_step")
    view = image.graph
    top = {n.label: n for n in view.top.nodes}
    assert "Transformer (forward)" not in top and "Transformer (backward)" not in top
    for pass_ in ("forward", "backward"):
        loss = view.bodies[top[f"train_step.loss_fn ({pass_})"].subgraphs[0].body]
        assert "Transformer" in {n.label for n in loss.nodes}


def test_an_nnx_block_added_at_the_end_is_one_added_layer_in_each_pass(tmp_path) -> None:
    """Issue 49.4: the diff pairs equations by the module they ran on (nnx: the parameters' path),
    so the backward of a fifth encoder block pairs with nothing (it paired with block 4's, and
    block 4's with block 3's…: 311 "changed" rows for one added layer)."""
    before = (CORPUS / "nnx_vit.py").read_text(encoding="utf-8")
    (tmp_path / "a.py").write_text(before, encoding="utf-8")
    (tmp_path / "b.py").write_text(before.replace("num_layers=4", "num_layers=5"), encoding="utf-8")
    found = run_cli("diff", "a.py::train_step", "b.py::train_step", cwd=tmp_path)
    assert found.returncode == 1, found.stderr
    summary = dict(part.split() for part in found.stdout.rstrip().splitlines()[-1].split(", "))
    assert summary["removed"] == "0", summary
    changed = found.stdout.split("\nchanged: ")[1].split("\n\n")[0].splitlines()[1:]
    in_model = sum(int(line.split()[1]) for line in changed if "ViT.__call__" in line)
    assert in_model <= 20, changed  # what reads the new block's output (final_norm), not every block after it
    # (the optimizer's per-leaf updates pair by order: a new layer's leaves shift them; under jax 0.12, whose
    # optax runs its bias correction in one jit over every leaf, they show as changed, a row per transform)
    added = [line for line in found.stdout.split("added (in B only)")[1].split("\n\n")[0].splitlines()[1:]]
    model = [line for line in added if "ViT.__call__" in line]
    assert model and all("encoder.layers[4]" in line for line in model), model  # the fifth block, nothing else of the model
    assert any("· forward" in line for line in model) and any("· backward" in line for line in model)


def test_the_flax_docs_vit_step_names_its_encoder_blocks_in_both_passes(tmp_path) -> None:
    """Issue 49's check on code none of us wrote: the flax docs' ViT tutorial's `train_step`
    (`@nnx.jit(donate_argnames=...)`, `nnx.value_and_grad` of `compute_losses_and_logits`, bf16
    activations), exported with no options."""
    boxes = _exported_with_no_options(tmp_path, "flax_docs_vit.py")
    forward = next(p for p, t in boxes.items() if t == "compute_losses_and_logits (forward)").split(":")[0]
    backward = next(p for p, t in boxes.items() if t == "compute_losses_and_logits (backward)").split(":")[0]
    for k in range(4):
        where = {p.split(":")[0] for p, t in boxes.items() if t.startswith(f"encoder.layers[{k}]")}
        assert where == {forward, backward}, (k, where)
    assert not [t for t in boxes.values() if WRAPPER.search(t)]


def test_an_nnx_cnn_opens_to_its_blocks_and_expand_opens_a_group_on_demand(tmp_path) -> None:
    """Issue 60.2: blocks that differ in width are no repeats, yet the first view opens the model to
    them (they fit in ~150 boxes); the optimizer's update stays shut until `--expand` names it; a name
    no group has is refused with the groups there are."""
    corpus = pathlib.Path(CORPUS) / "nnx_cnn_blocks.py"
    out = tmp_path / "cnn.svg"
    done = run_cli("export", f"{corpus}::train_step", "-o", str(out))
    assert done.returncode == 0, done.stderr
    boxes = _boxes(out.read_text(encoding="utf-8"))
    titles = list(boxes.values())
    assert titles.count("block1") == 2 and titles.count("block2") == 2  # forward and backward
    assert "optax: chain" not in titles and "flax: Optimizer.update" in titles
    done = run_cli("export", f"{corpus}::train_step", "-o", str(out), "--expand", "flax: Optimizer.update", "--expand", "block1/conv")
    assert done.returncode == 0, done.stderr
    titles = list(_boxes(out.read_text(encoding="utf-8")).values())
    assert "optax: chain" in titles and titles.count("block1") == 2
    done = run_cli("export", f"{corpus}::train_step", "-o", str(out), "--expand", "block3")
    assert done.returncode == 2 and "no group is called that; the groups are CNN.__call__" in done.stderr

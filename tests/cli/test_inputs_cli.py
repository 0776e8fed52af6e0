"""Real programs through the command line, inputs from makers: a user's own flax + optax train step
(written as a user would, in a temporary folder), an equinox module via --inputs, and the errors."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import cli_in_process as jaxscope

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / "tests" / "worker" / "corpus" / "models.py"


TRAIN = textwrap.dedent("""
    import jax
    import jax.numpy as jnp
    import optax
    from flax import linen as nn


    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x, training: bool = False):
            x = nn.Conv(features=8, kernel_size=(3, 3))(x)
            x = nn.relu(x)
            x = x.reshape((x.shape[0], -1))
            x = nn.Dropout(0.1, deterministic=not training)(x)
            return nn.Dense(10)(x)


    cnn = CNN()
    optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(3e-4, weight_decay=1e-4))


    def train_step(params, opt_state, batch, dropout_key):
        def loss_fn(p):
            logits = cnn.apply(p, batch["image"], training=True, rngs={"dropout": dropout_key})
            return optax.softmax_cross_entropy_with_integer_labels(logits, batch["label"]).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss


    def example(seed=0):
        key, dropout_key = jax.random.split(jax.random.key(seed))
        params = cnn.init(key, jnp.zeros((1, 8, 8, 1)))
        batch = {"image": jnp.ones((4, 8, 8, 1)), "label": jnp.arange(4) % 10}
        return params, optimizer.init(params), batch, dropout_key


    JAXSCOPE_INPUTS = {"train_step": example}
""")


@pytest.fixture(scope="module")
def train_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("user") / "train.py"
    path.write_text(TRAIN)
    return path


@pytest.mark.same_jax
def test_train_step_from_its_in_file_maker(train_file, tmp_path):
    out = tmp_path / "step.svg"
    done = jaxscope("export", f"{train_file}::train_step", "-o", str(out), "--flat")  # every equation drawn
    assert done.returncode == 0, done.stderr
    text = " ".join(ET.fromstring(out.read_text()).itertext())
    assert "conv_general_dilated" in text and "params['params']['Conv_0']['kernel']" in text

    printed = jaxscope("jaxpr", f"{train_file}::train_step")
    assert printed.returncode == 0, printed.stderr
    check = (
        "import sys, re, jax; sys.path.insert(0, sys.argv[1]); import train;"
        "t = jax.make_jaxpr(train.train_step)(*train.example()).pretty_print(source_info=True, name_stack=False, use_color=False);"
        "print('\\n'.join(re.sub(r'\\s+#.*$', '', l).rstrip() for l in t.splitlines()))"
    )
    expected = subprocess.run([sys.executable, "-c", check, str(train_file.parent)], capture_output=True, text=True, timeout=180)
    assert expected.returncode == 0, expected.stderr
    ours = [re.sub(r"\s+#.*$", "", line).rstrip() for line in printed.stdout.splitlines()]
    assert ours == expected.stdout.splitlines()


def test_list_names_the_maker(train_file):
    done = jaxscope("list", str(train_file))
    assert done.returncode == 0 and "::train_step(params, opt_state, batch, dropout_key)" in done.stdout
    assert "inputs from example()" in done.stdout


def test_run_of_the_train_step_says_ok(train_file):
    done = jaxscope("run", f"{train_file}::train_step", "--repeats", "1", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["ok"] and result["input_source"] == "JAXSCOPE_INPUTS['train_step'] in train.py"
    assert any(leaf["path"] == "batch['label']" and leaf["aval"].startswith("i32") for leaf in result["inputs"])


def test_equinox_module_via_inputs_flag():
    done = jaxscope("jaxpr", f"{MODELS}::eqx_predict", "--inputs", f"{MODELS}::make_eqx_inputs")
    assert done.returncode == 0, done.stderr
    assert "dot_general" in done.stdout and "erf" in done.stdout or "tanh" in done.stdout  # gelu


def test_hlo_and_explain_take_a_maker(train_file):
    hlo = jaxscope("hlo", f"{train_file}::train_step")
    assert hlo.returncode == 0 and "stablehlo.convolution" in hlo.stdout, hlo.stderr
    explained = jaxscope("explain", f"{MODELS}::nnx_forward")
    assert explained.returncode == 0, explained.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--args", "f32[3]", "--inputs", f"{MODELS}::make_one"), ["not both"]),
        (("--inputs", "nowhere.py::make"), ["no such file: nowhere.py"]),
        (("--inputs", "not a target"), ["bad --inputs"]),
    ],
)
def test_bad_inputs_flags(args, words):
    done = jaxscope("jaxpr", f"{MODELS}::one", *args)
    assert done.returncode == 2
    for word in words:
        assert word in done.stderr, done.stderr


def test_a_maker_that_hangs_is_stopped_and_named():
    done = jaxscope("jaxpr", f"{MODELS}::one", "--inputs", f"{MODELS}::make_forever", "--timeout", "3")
    assert done.returncode == 4, done.stderr
    assert "inputs phase ran past its 3 s limit" in done.stderr and "maker" in done.stderr and "models.py" in done.stderr


def test_a_function_without_inputs_is_told_about_makers(tmp_path):
    path = tmp_path / "f.py"
    path.write_text("def step(params, batch):\n    return params\n")
    done = jaxscope("export", f"{path}::step", "-o", str(tmp_path / "x.svg"))
    assert done.returncode == 2
    assert "JAXSCOPE_INPUTS" in done.stderr and "--inputs" in done.stderr and "--args" in done.stderr


def test_x64_keeps_64_bit_specs_and_without_it_the_narrowing_is_said():
    narrowed = jaxscope("jaxpr", f"{MODELS}::one", "--args", "f64[3]")
    assert narrowed.returncode == 0 and "a:f32[3]" in narrowed.stdout
    assert "warning: 64-bit types are traced as 32-bit" in narrowed.stderr and "--x64" in narrowed.stderr
    kept = jaxscope("jaxpr", f"{MODELS}::one", "--args", "f64[3]", "--x64")
    assert kept.returncode == 0 and "a:f64[3]" in kept.stdout and "warning" not in kept.stderr

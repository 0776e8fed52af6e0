"""The worker environment for a device setup: our XLA flag replaced, the user's flags kept."""

from __future__ import annotations

import pytest

from jaxscope.runtime.devices import DEVICE_COUNT_FLAG, device_env, xla_flags


def test_device_count_flag_is_added_replaced_and_removed_keeping_other_flags():
    assert xla_flags("", 4) == f"{DEVICE_COUNT_FLAG}=4"
    assert xla_flags(f"--xla_dump_to=/tmp/a {DEVICE_COUNT_FLAG}=8", 2) == f"--xla_dump_to=/tmp/a {DEVICE_COUNT_FLAG}=2"
    assert xla_flags(f"{DEVICE_COUNT_FLAG}=8 --xla_cpu_use_thunk_runtime=false", 1) == "--xla_cpu_use_thunk_runtime=false"
    assert xla_flags("--xla_dump_to='/tmp/with space'", 1) == "'--xla_dump_to=/tmp/with space'"


def test_device_env_sets_backends_only_when_asked():
    assert device_env(3, "", {"XLA_FLAGS": "--a=1"}) == {"XLA_FLAGS": f"--a=1 {DEVICE_COUNT_FLAG}=3"}
    assert device_env(1, "cpu") == {"XLA_FLAGS": "", "JAX_PLATFORMS": "cpu"}


@pytest.mark.parametrize(
    ("count", "platforms", "fragment"),
    [(0, "", "between 1 and 64"), (65, "", "between 1 and 64"), (1, "tpu;rm -rf", "backends must be")],
)
def test_bad_setups_say_what_is_wrong(count, platforms, fragment):
    with pytest.raises(ValueError, match=fragment):
        device_env(count, platforms)


def test_no_device_count_given_leaves_the_users_xla_flags_alone():
    """`run` without --cpu-devices: the environment's own count stays (it used to be removed, so
    `XLA_FLAGS=--xla_force_host_platform_device_count=4 jaxscope run` saw one device)."""
    assert device_env(None, "", {"XLA_FLAGS": f"{DEVICE_COUNT_FLAG}=4"}) == {}
    assert device_env(None, "cpu") == {"JAX_PLATFORMS": "cpu"}

"""User code that starts, at import, a child in a session of its own (out of the worker's process
group) that never exits; it writes the child's pid to jaxscope-setsid-<worker pid>.pid in the temp folder."""
import os
import subprocess
import sys
import tempfile

import jax.numpy as jnp

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
with open(os.path.join(tempfile.gettempdir(), f"jaxscope-setsid-{os.getpid()}.pid"), "w") as fh:
    fh.write(f"{child.pid}\n")


def f(x):
    return jnp.sin(x)

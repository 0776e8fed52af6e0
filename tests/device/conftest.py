"""`make test-device` runs these tests on a machine with an accelerator (JAXSCOPE_DEVICE_TESTS=1);
elsewhere they are not collected: CI has no TPU, and what they check there is replayed on the CPU
from the fixtures `record_fixtures.py` recorded (tests/fixtures/tpu/)."""

import os

collect_ignore_glob = [] if os.environ.get("JAXSCOPE_DEVICE_TESTS") == "1" else ["test_*.py"]

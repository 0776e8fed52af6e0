"""Run vs eager in the worker: running jitted and eagerly, comparing outputs, and the evidence runs that name a difference's cause."""

"""The `jaxscope` command line, one module per sub-command (`main` dispatches). Headless commands
never import Qt (PNG/PDF export aside) or jax: tracing happens in a worker process."""

"""`python -m jaxscope` is the same as the `jaxscope` command."""

from jaxscope.cli.main import main

raise SystemExit(main())

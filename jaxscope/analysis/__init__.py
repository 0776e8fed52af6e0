"""What a trace means: control-flow marks, diagnostics, retrace reasons, graph queries, verdicts."""

"""The window's panes: source, jaxpr and IR code views, the panels (inputs, run, problems, guide,
diagnostics, log) and dialogs."""

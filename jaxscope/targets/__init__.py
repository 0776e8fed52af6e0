"""Targets and inputs: which function to trace (`file.py::name`) and with what arguments."""

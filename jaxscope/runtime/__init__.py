"""The processes beside the GUI: the worker's protocol and client, the layout process, devices."""

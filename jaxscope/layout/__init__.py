"""Where every box and edge of a graph goes: dot for small bodies, a layered layout for big ones."""

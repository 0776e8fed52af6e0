"""The window and what it is made of: the controller (futures -> signals), the open document, the
IR and job collaborators, preferences and themes."""

"""The jaxpr, StableHLO and compiled-HLO texts: parsing, lexing and their links to equations."""

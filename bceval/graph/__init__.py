"""The doit build graph: the loader, doit helpers and one module of task generators per stage."""

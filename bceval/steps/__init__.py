"""The actions of the doit graph, one module per stage: each reads its inputs, calls the pure core and
writes atomically. `bceval/dodo.py` wires them to files; nothing here knows about doit."""

"""`doit` loads the graph from here (a user's dodo.py holds `from bceval.dodo import *`)."""

from bceval.graph.loader import *  # noqa: F401,F403

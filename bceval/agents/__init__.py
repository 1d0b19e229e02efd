"""Ways to answer an evaluator's questions; importing the package registers the kinds (bceval.agents.kinds)."""

from bceval.agents import kinds as _kinds  # noqa: F401 - registers every kind

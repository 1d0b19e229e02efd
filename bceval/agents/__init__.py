"""Ways to answer an evaluator's questions: oracle, baseline (lexical, no model) and command (live agent).

Importing the package registers the kinds (bceval.agents.kinds); bceval.agents.registry looks them up."""

from bceval.agents import kinds as _kinds  # noqa: F401 - registers every kind

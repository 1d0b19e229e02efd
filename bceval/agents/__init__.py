"""Ways to answer prepared review requests: oracle, baseline (lexical, no model) and command (live agent)."""

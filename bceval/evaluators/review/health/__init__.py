"""Corpus health: coverage, ranking margins and an answer-leak audit, before any model runs."""

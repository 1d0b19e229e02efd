"""Evaluators: one protocol, and review, plan and implementation registered in one place."""

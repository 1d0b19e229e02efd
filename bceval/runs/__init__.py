"""Runs: one answer+score cycle with fixed agent settings, owning `out/runs/<run>/` and nothing else."""

"""Experiments: arms x epochs x cases, and the statistics that compare arms case by case."""

"""The record of a scored run: scorecard model, rendering, published history, comparison."""

"""bceval: evaluation harness for BCQuality-style AL code-review guidance corpora."""

__version__ = "0.1.0"

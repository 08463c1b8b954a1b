"""stretto's version, in one place: the distribution's (pyproject.toml reads it from here),
`stretto.__version__`, `stretto_core.__version__` and `stretto --version`."""

__version__ = "0.1.0"

"""The package version: the only place it is written.

pyproject.toml reads it (``[tool.setuptools.dynamic]``), setup.py passes it to
the C library as ``-DHERMES_FTS_VERSION``, and ``hermes_fts.__version__`` is
this value.  A leaf module: it imports nothing.
"""

__version__ = "0.2.0"

"""``python -m hermes_fts``: the ``hermes-fts`` command, for a venv whose scripts
folder is not on PATH (as ``python -m hermes_fts.cli``)."""

from .cli import run

run()

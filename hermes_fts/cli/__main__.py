"""``python -m hermes_fts.cli``: the same as the ``hermes-fts`` command."""

from . import run

run()

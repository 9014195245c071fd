"""``python -m hermes_fts.cli``: the same as the ``hermes-fts`` command."""

import sys

from . import main

sys.exit(main())

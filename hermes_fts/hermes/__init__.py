"""Hermes Agent: the plugin (``plugin``), what the host offers and how its
plugin settings read (``host``), the leaf that reads ``config.yaml``
(``config``), the agent behind a call (``agent``) and the pending table
applied after each turn (``upkeep``).
"""

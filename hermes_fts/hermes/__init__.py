"""Hermes Agent: the plugin (``plugin``), what the host offers and how its
plugin settings read (``host``), and the leaf that reads ``config.yaml``
(``config``).
"""

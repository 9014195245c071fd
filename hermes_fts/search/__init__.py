"""Searching: the query language (``syntax``), planning a route (``plan``), running
it (``run``), ranking rows and sessions (``rank``, ``evidence``), the LIKE scan
(``like``), snippets (``snippets``) and the request a search takes (``request``).
"""

"""Searching: the query language (``syntax``), reading a question and a word's
other forms (``question``, ``wordforms``), planning a route (``plan``), the
request a search takes (``request``) and the SQL of its filters (``filters``),
running it (``run``), a best match's evidence and its top rows (``evidence``),
the session score (``sessions``), the exact top by rank bounds (``topk``),
an index's rows by rank or by time (``rank``), the LIKE scan (``like``)
and snippets (``snippets``).
"""

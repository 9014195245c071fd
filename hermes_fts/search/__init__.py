"""Running a search planned by ``query/``: the request it takes (``request``),
running it (``run``), a best match's evidence and its top rows (``evidence``),
the session score (``sessions``), the exact top by rank bounds (``topk``), the
rows read with the request's filters and sort, by rank or by time (``rows``),
the LIKE scan (``like``) and snippets (``snippets``).
"""

"""The query language, with no SQL: cleaning what was typed (``typed``), parsing
it (``syntax``), reading a question for its possessives, category and time
words (``question``) and a word's other forms (``wordforms``), and the plan a
search runs (``plan``): the route that answers it exactly, the words of a best
match, the MATCH text.  ``search/`` runs the plan.
"""

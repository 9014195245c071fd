"""The indexes in a store: their DDL (``schema``), keeping them filled
(``maintain``), their state, alignment and repair (``lifecycle``), the time
table (``time_table``) and giving back what older releases made under
Hermes' names (``old_layout``).
"""

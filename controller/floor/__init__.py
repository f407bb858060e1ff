"""The floor console (``tablectl floor``): every table under a root, from public topics only.

It subscribes to ``{root}/+/controller/status``, ``{root}/+/state``, ``{root}/+/alerts`` and
``{root}/+/hands`` (never a ``dev/`` topic: those carry card identities), keeps the alert history
in SQLite and serves the grid of tables and a page per table with live updates.
"""

"""Hand history from the journal: ``tablectl history`` (list, show, PHH export).

Modules: :mod:`~controller.history.query` (the hands the journal published, filters),
:mod:`~.render` (text and JSON), :mod:`~.phh` (PHH files) and :mod:`~.cli` (the command).
"""

"""``tablectl deploy``: everything the table PC needs, rendered from the table's configuration.

One module per artefact: the broker identities and their secrets (``identities``), mosquitto's
password file format (``passwords``), the broker configuration with its ACL and the bridge to the
floor (``mosquitto``), the systemd unit (``unit``), the udev rules (``udev``) and the table's own
configuration with its credentials (``table_config``). ``render`` puts them together; ``cli`` is
the subcommand. Templates are package data in ``templates/``. See ``docs/deploy.md``.
"""

"""The one error type of configuration loading: a single line that names the place."""


class ConfigError(Exception):
    """A configuration or registry problem, with a message like ``file:line: key: what``."""

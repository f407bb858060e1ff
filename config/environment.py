"""The environment's overrides of a table configuration: ``TABLECTL_MQTT__URL=...`` replaces
``[mqtt] url`` (nested keys joined with ``__``), through pydantic-settings.

pydantic-settings is imported only when such a variable is set (:func:`validated`): it and what
only it brings (dotenv, its sources, shlex: 33 modules) were some 50 ms of what ``tablectl run``
imports before it is online, for a table PC that sets none.
"""

from __future__ import annotations

import os
from functools import cache
from typing import TYPE_CHECKING, Any

from config.models import TableConfig

if TYPE_CHECKING:
    from pydantic_settings import BaseSettings

ENV_PREFIX = "TABLECTL_"
ENV_DELIMITER = "__"


def overrides_set() -> bool:
    """Whether any ``TABLECTL_`` variable is set (its case does not matter, as for the keys)."""
    return any(name.upper().startswith(ENV_PREFIX) for name in os.environ)


def validated(data: dict[str, Any]) -> TableConfig:
    """The configuration file's ``data`` validated, with the environment's overrides applied.

    Top-level sections are matched whatever their case (``[Table]``), as pydantic-settings
    matches them, with or without variables set. Raises pydantic's ``ValidationError``.
    """
    if not overrides_set():
        return TableConfig.model_validate({key.lower(): value for key, value in data.items()})
    settings = _settings_class()(**data)
    return TableConfig.model_validate(settings.model_dump())


@cache
def _settings_class() -> type[BaseSettings]:
    """TableConfig fed by the file's data (init) and overridden by the environment; built at
    the first use (see the module's docstring)."""
    from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

    class TableSettings(BaseSettings, TableConfig):
        model_config = SettingsConfigDict(
            env_prefix=ENV_PREFIX,
            env_nested_delimiter=ENV_DELIMITER,
            extra="forbid",
            frozen=True,
            env_parse_none_str="null",
        )

        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            # First wins: the environment overrides the file.
            return (env_settings, init_settings)

    return TableSettings

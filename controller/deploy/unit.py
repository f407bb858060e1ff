"""The systemd unit of ``tablectl run`` (Type=notify, watchdog, confinement)."""

from __future__ import annotations

import os
import shlex
from importlib import resources
from pathlib import Path
from string import Template

from config.models import TableConfig


def unit_name(config: TableConfig) -> str:
    return f"tablectl-{config.table.id}.service"


def service_unit(config: TableConfig, *, executable: Path, installed_config: Path) -> str:
    """The unit text: ``executable run --config installed_config`` as the service user.

    ``ReadWritePaths=`` is the journal's directory, the only place the service writes.
    """
    template = Template(
        resources.files("controller.deploy").joinpath("templates/tablectl.service").read_text("utf-8")
    )
    watchdog = config.deploy.watchdog_s
    return template.substitute(
        table=config.table.id,
        config=installed_config,
        unit_name=unit_name(config),
        exec_start=shlex.join([str(executable), "run", "--config", str(installed_config)]),
        user=config.deploy.user,
        watchdog_s=watchdog,
        ping_s=f"{watchdog / 2:g}",
        journal_dir=os.path.normpath(config.journal.path.parent),
    )

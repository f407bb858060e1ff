"""Fixtures of the service tests: ``tablectl run`` processes stopped at the end of each test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import pytest

from tests.service.support import ServiceProcess


class StartService(Protocol):
    def __call__(
        self,
        config: Path,
        *,
        file_size_limit: int | None = None,
        extra_args: tuple[str, ...] = (),
    ) -> ServiceProcess: ...


@pytest.fixture
def start_service(tmp_path: Path) -> Iterator[StartService]:
    """Start ``tablectl run --config FILE`` (log in tmp_path/service.log); stopped afterwards."""
    started: list[ServiceProcess] = []

    def start(
        config: Path, *, file_size_limit: int | None = None, extra_args: tuple[str, ...] = ()
    ) -> ServiceProcess:
        service = ServiceProcess(
            config, tmp_path / "service.log", file_size_limit=file_size_limit, extra_args=extra_args
        )
        service.start()
        started.append(service)
        return service

    yield start
    for service in started:
        service.stop()

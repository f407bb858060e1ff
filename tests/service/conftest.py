"""Fixtures of the service tests: ``tablectl run`` processes stopped at the end of each test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.service.support import ServiceProcess

StartService = Callable[[Path], ServiceProcess]


@pytest.fixture
def start_service(tmp_path: Path) -> Iterator[StartService]:
    """Start ``tablectl run --config FILE`` (log in tmp_path/service.log); stopped afterwards."""
    started: list[ServiceProcess] = []

    def start(config: Path) -> ServiceProcess:
        service = ServiceProcess(config, tmp_path / "service.log")
        service.start()
        started.append(service)
        return service

    yield start
    for service in started:
        service.stop()

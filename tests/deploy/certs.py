"""A test certificate authority and server certificates, made with the ``openssl`` command."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


@dataclass(frozen=True)
class Authority:
    cert: Path
    key: Path


def make_ca(directory: Path, name: str) -> Authority:
    """A self-signed CA (EC P-256, a day's validity)."""
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "1",
        "-subj",
        f"/CN={name}",
        "-keyout",
        str(key),
        "-out",
        str(cert),
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign",
    )
    return Authority(cert, key)


def make_server_cert(
    directory: Path, ca: Authority, name: str, *, client_auth: bool = False
) -> tuple[Path, Path]:
    """A server certificate for 127.0.0.1 and localhost, signed by ``ca``: (cert, key); with
    ``client_auth`` it may also prove a client (a NATS node on its routes to the others)."""
    cert, key, request = directory / f"{name}.crt", directory / f"{name}.key", directory / f"{name}.csr"
    extensions = directory / f"{name}.ext"
    extensions.write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        f"extendedKeyUsage=serverAuth{',clientAuth' if client_auth else ''}\n"
        "basicConstraints=CA:FALSE\n"
    )
    _openssl(
        "req",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-subj",
        f"/CN={name}",
        "-keyout",
        str(key),
        "-out",
        str(request),
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        str(request),
        "-CA",
        str(ca.cert),
        "-CAkey",
        str(ca.key),
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        str(extensions),
        "-out",
        str(cert),
    )
    return cert, key

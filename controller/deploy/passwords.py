"""mosquitto's password file format, written without ``mosquitto_passwd``.

mosquitto 2.0 stores ``username:$7$ITERATIONS$SALT$HASH``: PBKDF2-HMAC-SHA512 over the password
with a 12-byte random salt, SALT and HASH (64 bytes) in standard base64. The iteration count is
read back from each line, so any count works; 101 is ``mosquitto_passwd``'s own default (the
secrets are 256-bit random strings, which no iteration count would make any harder to guess).
A test checks the result against ``mosquitto_passwd -U`` and a real broker.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Final

ITERATIONS: Final = 101
SALT_BYTES: Final = 12


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def hash_password(password: str, *, salt: bytes | None = None, iterations: int = ITERATIONS) -> str:
    """``$7$...`` for ``password`` (a fresh random salt unless one is given)."""
    salt = secrets.token_bytes(SALT_BYTES) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha512", password.encode("utf-8"), salt, iterations)
    return f"$7${iterations}${_b64(salt)}${_b64(digest)}"


def check_password(password: str, hashed: str) -> bool:
    """Whether ``hashed`` (a ``$7$`` entry) is the hash of ``password``."""
    parts = hashed.split("$")
    if len(parts) != 5 or parts[1] != "7":
        raise ValueError("not a mosquitto $7$ (PBKDF2-SHA512) hash")
    iterations, salt, digest = int(parts[2]), base64.b64decode(parts[3]), base64.b64decode(parts[4])
    mine = hashlib.pbkdf2_hmac("sha512", password.encode("utf-8"), salt, iterations)
    return hmac.compare_digest(mine, digest)


def password_file(entries: dict[str, str]) -> str:
    """The text of a password file: one ``username:hash`` line per (username, password)."""
    for username in entries:
        if not username or ":" in username or any(c.isspace() for c in username):
            raise ValueError(f"username {username!r}: no colon, no white space, not empty")
    return "".join(f"{user}:{hash_password(password)}\n" for user, password in entries.items())

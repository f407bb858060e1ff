"""Byte-exact device simulators over real transports (pseudo-terminals, a pyusb backend)."""

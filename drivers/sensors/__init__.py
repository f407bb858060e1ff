"""The USB sensor board: wire protocol, pyusb link and driver."""

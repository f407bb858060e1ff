"""The RFID reader with its antenna multiplexer: wire protocol, presence tracking and driver."""

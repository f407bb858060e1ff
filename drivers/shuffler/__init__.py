"""The automatic shuffler with deck check: wire protocol and driver."""

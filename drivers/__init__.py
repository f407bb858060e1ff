"""Device drivers: each talks to one device over its real transport and publishes contract events."""

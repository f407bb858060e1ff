"""Configuration: the table configuration models, the TOML loader and the deck registry."""

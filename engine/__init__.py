"""The pure, deterministic irregularity engine: events in, state and alert changes out."""

"""The table controller service: configuration, drivers, engine, alerts to the dealer."""

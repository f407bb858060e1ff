"""The table controller service, ``tablectl run``: a pipeline from the broker to the engine and back
(intake, classification, the controller of one table, acknowledgements, publishing, the dealer's
lamp and buzzer, the start-up grace, the drivers run in-process, systemd)."""

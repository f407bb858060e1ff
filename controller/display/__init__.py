"""The dealer's display: a web page for the touchscreen at the table, served by ``tablectl run``.

Fed in-process by what the controller publishes (state, alert changes, hand results, its own
status) and by the device statuses it receives; built only from public data, never a hole card.
"""

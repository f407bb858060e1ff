"""Test support: real services started by the tests themselves."""

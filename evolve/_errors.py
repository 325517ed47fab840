"""Errors shared by the run's configuration sections (kept apart to avoid import cycles)."""


class ConfigError(ValueError):
    """A run configuration value is missing or wrong; the message says which and how to fix it."""

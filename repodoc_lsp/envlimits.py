"""Limits that are not settings, from environment variables (REPODOC_LOCK_TIMEOUT, ...)."""

from __future__ import annotations

import os


def env_seconds(name: str, default: float, minimum: float = 0.0) -> float:
    """Seconds from the environment variable `name` (at least `minimum`); `default` when it is
    unset or not a number."""
    try:
        return max(minimum, float(os.environ.get(name, "")))
    except ValueError:
        return default

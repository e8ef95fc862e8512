"""Small helpers shared by the package."""

import functools
import os.path


@functools.lru_cache(maxsize=None)
def normalise(name: str) -> str:
    """Normalise a widget name.

    Parameters
    ----------
    name : str
        The raw name, with <angle> brackets allowed.

    Returns
    -------
    str
        The name in lower case.
    """
    return name.strip().lower()


def join(*parts: str) -> str:
    """Join path parts (a thin wrapper of ``os.path.join``)."""
    return os.path.join(*parts)

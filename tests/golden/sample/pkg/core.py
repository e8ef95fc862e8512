"""Widgets: the core of the sample package.

This class represents nothing: the words "class represents" in a docstring
are not a class.
"""

from __future__ import annotations

import abc
import enum
import pickle
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import (
    Any,
    NamedTuple,
)

from . import util
from .util import normalise as _norm


class Color(enum.Enum):
    """Colours a widget can have."""

    RED = 1
    GREEN = 2


@dataclass(frozen=True)
class Widget:
    """A widget with a name and a colour.

    Args:
        name: The widget's name.
        color: Its colour.
    """

    name: str
    color: Color = Color.RED
    tags: list[str] = field(default_factory=list)

    def label(self, upper: bool = False) -> str:
        """Return the widget's label.

        Args:
            upper (bool): Upper-case the label.

        Returns:
            str: The label.

        Raises:
            ValueError: If the name is empty.

        >>> Widget("a").label()
        'a'
        """
        if not self.name:
            raise ValueError("empty")
        return self.name.upper() if upper else self.name

    @property
    def size(self) -> int:
        return len(self.name)


class Base(abc.ABC):
    """An abstract base."""

    @abc.abstractmethod
    def run(self) -> None: ...


class Point(NamedTuple):
    x: int
    y: int


def make_widget(name: str, **options: Any) -> Widget:
    """Make a widget from a name."""

    def clean(value: str) -> str:
        """Clean one value."""
        return _norm(value)

    return Widget(clean(name))


@contextmanager
def opened(path: str):
    """Open a file for a while."""
    handle = open(path)
    try:
        yield handle
    finally:
        handle.close()


async def fetch(url: str) -> bytes:
    """Fetch a URL (not really)."""
    return url.encode()


def risky(data: bytes, cmd: str) -> object:
    value = eval(cmd)
    subprocess.run(cmd, shell=True)
    return pickle.loads(data), value, util.join("a", "b")

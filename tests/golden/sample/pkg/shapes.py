"""Shapes built on :class:`pkg.core.Base`; names come from ``pkg.util.normalise``."""

from __future__ import annotations

from pkg.core import Base, Widget

DEFAULT_SIDES: int = 4
NAME = "shapes"


class Square(Base):
    """A square. Its label is a :class:`~pkg.core.Widget`; see :func:`pkg.core.make_widget`."""

    sides = DEFAULT_SIDES

    def __init__(self, side: float) -> None:
        self.side = side

    def run(self) -> None:
        """Draw it."""

    def area(self) -> float:
        return self.side**2


class Tile(Square):
    """A square tile holding a widget."""

    widget: Widget | None = None


def tiles(n: int) -> list[Tile]:
    """`n` tiles of side 1 (see `Square.area`)."""
    return [Tile(1.0) for _ in range(n)]

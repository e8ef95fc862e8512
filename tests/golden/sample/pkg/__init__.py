"""Sample package for repodoc's golden tests."""

from .core import Widget, make_widget

__all__ = ["Widget", "make_widget"]

from pkg.core import Widget, make_widget


def test_label():
    assert Widget("a").label() == "a"


def test_make():
    assert make_widget(" A ").name == "a"

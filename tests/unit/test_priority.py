"""Background work steps aside while requests are in flight, but never waits forever."""

from __future__ import annotations

import threading

from repodoc_lsp.server.priority import Requests


def test_background_waits_for_requests_in_flight() -> None:
    requests = Requests(max_wait=30)
    resumed = threading.Event()

    def background() -> None:
        requests.step_aside()
        resumed.set()

    with requests:
        with requests:  # two requests at once
            worker = threading.Thread(target=background)
            worker.start()
            assert not resumed.wait(0.2)
        assert not resumed.wait(0.2)  # one is still in flight
    assert resumed.wait(5)
    worker.join()


def test_a_stream_of_requests_cannot_starve_background_work() -> None:
    requests = Requests(max_wait=0.05)
    resumed = threading.Event()

    def background() -> None:
        requests.step_aside()
        resumed.set()

    with requests:  # a request that stays in flight
        worker = threading.Thread(target=background)
        worker.start()
        assert resumed.wait(5), "background work waited past max_wait"
    worker.join()
    resumed.clear()
    background()  # nothing in flight: returns at once
    assert resumed.is_set()

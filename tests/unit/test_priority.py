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


def test_called_between_every_two_files_it_looks_again_once_a_quantum_has_passed() -> None:
    """An indexing pass steps aside between every two files; a request that comes meanwhile waits
    for at most a quantum of that work, and a stream of requests one after another still leaves
    the background a quantum between two of them."""
    requests = Requests(max_wait=30, quantum=0.5)
    requests.step_aside()  # nothing in flight: let go now
    resumed = threading.Event()

    def background() -> None:
        requests.step_aside()
        resumed.set()

    with requests:  # within the quantum the thread goes on at once
        background()
        assert resumed.is_set()
    resumed.clear()
    threading.Event().wait(0.6)  # the quantum has passed: it waits for the request
    with requests:
        worker = threading.Thread(target=background)  # another thread's quantum is its own
        worker.start()
        assert not resumed.wait(0.2)
    assert resumed.wait(5)
    worker.join()
    with requests:
        worker = threading.Thread(target=background)
        resumed.clear()
        worker.start()
        assert not resumed.wait(0.2)  # a thread's first call looks at once
    assert resumed.wait(5)
    worker.join()

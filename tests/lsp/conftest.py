"""pytest-lsp fixture: the real server process over stdio."""

from __future__ import annotations

import asyncio
import os

import pytest_lsp
from lsp_helpers import SERVER
from pytest_lsp import ClientServerConfig, LanguageClient


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env={
    **os.environ, "REPODOC_CACHE_DIR": os.environ.get("REPODOC_TEST_CACHE", "")}))
async def client(lsp_client: LanguageClient):
    yield lsp_client
    await asyncio.wait_for(lsp_client.shutdown_session(), 10)

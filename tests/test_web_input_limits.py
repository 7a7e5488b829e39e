"""Web posts that are malformed or too large: one line back (400 / 413), nothing on the
server's log or stderr, nothing stored. And the small one beside them: ``import --choices``
says it takes a file."""

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from stratagate_plugin.cli.main import build_parser
from stratagate_plugin.harness.sessions import read_session, session_path
from stratagate_plugin.web.shell.security import MAX_BODY_BYTES
from tests.webapp import new_chat, post, web_app

BAD_MULTIPART = [
    ("multipart/form-data; boundary=xyz", b"garbage"),
    ("multipart/form-data; boundary=xyz", b"--xyz\r\nbad header line\r\n\r\nhi\r\n--xyz--\r\n"),
    ("multipart/form-data; boundary=xyz", b"--xyz\r\nContent-Disposition: form-data\r\n\r\nhi"),
    ("multipart/form-data", b"--x\r\n\r\n"),  # no boundary
]


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[tuple[Any, httpx.AsyncClient]]:
    async with web_app(tmp_path) as (_, host, client):
        yield host, client


def turns_of(session_id: str) -> int:
    path = session_path(session_id)
    return len(read_session(path).turns) if path.exists() else 0


def routes(session_id: str) -> list[str]:
    return [f"/chat/{session_id}/messages", "/memory/settings", "/memory/import"]


async def test_a_bad_multipart_body_is_one_line_and_nothing_on_the_log(
    app: tuple[Any, httpx.AsyncClient], caplog: pytest.LogCaptureFixture, capfd: Any
) -> None:
    _, client = app
    session_id = await new_chat(client)
    settings_before = (await client.get("/memory/settings")).text
    caplog.set_level(logging.DEBUG)
    for url in routes(session_id):
        for content_type, body in BAD_MULTIPART:
            headers = {"content-type": content_type, "accept": "application/json"}
            answer = await post(client, url, content=body, headers=headers)
            assert answer.status_code == 400, (url, body, answer.text)
            message = answer.json()["error"] if "json" in answer.headers["content-type"] else ""
            assert message == "" or "\n" not in message.strip()
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert noisy == [], [r.getMessage() for r in noisy]
    assert capfd.readouterr().err == ""
    assert turns_of(session_id) == 0
    assert (await client.get("/memory/settings")).text == settings_before


async def chunks(size: int) -> AsyncIterator[bytes]:
    """A body with no Content-Length (sent chunked), counted by the guard as it arrives."""
    sent = 0
    piece = b"text=" + b"a" * 65_531
    while sent < size:
        yield piece
        sent += len(piece)
        piece = b"a" * 65_536


async def test_chat_and_form_posts_obey_the_body_limit(app: tuple[Any, httpx.AsyncClient]) -> None:
    _, client = app
    session_id = await new_chat(client)
    big = b"text=" + b"a" * MAX_BODY_BYTES
    form = {"content-type": "application/x-www-form-urlencoded"}
    for url in routes(session_id)[:2]:
        declared = await post(client, url, content=big, headers=form)
        assert declared.status_code == 413 and "1000000 bytes" in declared.text
        streamed = await post(client, url, content=chunks(MAX_BODY_BYTES + 1), headers=form)
        assert streamed.status_code == 413 and "1000000 bytes" in streamed.text
    assert turns_of(session_id) == 0


def test_import_choices_help_says_it_takes_a_json_file(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["import", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # however argparse wraps it
    assert "--choices CHOICES with --commit: a JSON file {index: action}" in text

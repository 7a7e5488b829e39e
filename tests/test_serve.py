"""``stratagate serve`` as a user runs it: real subprocesses on loopback addresses."""

import re
import socket
from pathlib import Path

import httpx
from browser import http_client, run, serve, stop


def test_it_prints_the_url_of_a_free_port_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    with serve(tmp_path, "--port", "0") as app:
        found = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/", app.printed)
        assert found, app.printed
        assert int(found[1]) > 0
        with http_client(app) as client:
            home = client.get("/")
            assert (home.status_code, home.headers["location"]) == (307, "/chat")
            assert client.get("/chat").status_code == 200
        assert stop(app) == 0
    assert app.stderr().splitlines() == [
        "loading the plugins of profile 'default'…",
        "starting the plugins (opening and migrating the memory database)…",
        "building the web app…",
        "Press Ctrl-C to stop.",
    ]


def test_a_public_address_without_a_token_is_refused(tmp_path: Path) -> None:
    done = run(tmp_path, "serve", "--host", "0.0.0.0", "--port", "0")
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(
        "stratagate: error: refusing to serve on 0.0.0.0 without an access token"
    )


def test_with_a_token_every_request_carries_it(tmp_path: Path) -> None:
    """127.0.0.2 is not a loopback *name* the guard knows, so it needs the token (and
    unlike 0.0.0.0 it is not reachable from the network)."""
    with serve(tmp_path, "--host", "127.0.0.2", "--port", "0", "--token", "abc123") as app:
        assert re.fullmatch(r"http://127\.0\.0\.2:\d+/\?token=abc123", app.printed)
        with http_client(app) as client:
            assert_refused(client)
        with http_client(app) as client:
            visit = client.get("/?token=abc123")
            assert (visit.status_code, visit.headers["location"]) == (303, "/")
            cookie = visit.headers["set-cookie"]
            assert cookie.startswith("sg_token=abc123;")
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
            assert client.get("/chat").status_code == 200
            assert client.get("/static/stratagate.css").status_code == 200
        with http_client(app, headers={"authorization": "Bearer abc123"}) as client:
            assert client.get("/chat").status_code == 200


def assert_refused(client: httpx.Client) -> None:
    for response in (
        client.get("/chat"),
        client.get("/static/stratagate.css"),
        client.post("/chat/new"),
        client.get("/?token=abc12"),
        client.get("/chat", headers={"authorization": "Bearer abc12"}),
        client.get("/chat", headers={"cookie": "sg_token=abc12"}),
    ):
        assert response.status_code == 401, response.request
        assert response.text.startswith("refused: open the link with ?token=")
        assert "abc123" not in response.text


def test_a_taken_port_is_one_error_line(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = run(tmp_path, "serve", "--port", str(port))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"stratagate: error: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]

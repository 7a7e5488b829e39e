"""The guard in front of every request: who may talk to the app and what it answers with.

- A request whose ``Host`` is not a name the server answers on is refused (DNS rebinding):
  the bound address (for ``0.0.0.0`` / ``::``, the machine's own addresses and name), the
  loopback names when it is reachable on loopback, and the names given with
  ``--allowed-host``.
- A write (POST, PUT, PATCH, DELETE) a browser sends from another site is refused: by
  ``Sec-Fetch-Site``, else by ``Origin`` (a request with neither is not from a browser,
  so no cross-site page can have sent it), as Go's ``http.CrossOriginProtection`` does.
- With an access token (required off loopback), every request carries it: as a bearer
  header, or the cookie a visit to ``/?token=…`` sets (cookies read one by one, so a
  neighbour Python's strict parser dislikes cannot hide it).
- Bodies are limited in size; every page gets a Content-Security-Policy without inline
  script; HTML and JSON answers pass the secret redaction once more, as a last net.
"""

import hashlib
import hmac
import ipaddress
import socket
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlencode, urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ...core.text.secrets import redact_secrets

MAX_BODY_BYTES = 1_000_000
TOKEN_COOKIE = "sg_token"
UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
WILDCARD_BINDS = ("0.0.0.0", "::", "")
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]
_REDACTED_TYPES = (b"text/html", b"application/json")


@dataclass(frozen=True)
class GuardPolicy:
    """``hosts``: the names a request's Host may carry; ``token``: None on loopback."""

    hosts: frozenset[str]
    token: str | None = None
    max_body: int = MAX_BODY_BYTES
    body_limits: Mapping[str, int] = field(default_factory=dict)  # path → a larger limit

    def body_limit(self, path: str) -> int:
        return self.body_limits.get(path.rstrip("/") or "/", self.max_body)


def policy_for(bind: str, token: str | None, extra_hosts: Iterable[str] = ()) -> GuardPolicy:
    """Loopback answers to its loopback names; any other bind to the names it is reachable
    by (``answered_names``) and those given, and only with a token."""
    if bind not in LOOPBACK_NAMES and not token:
        raise ValueError(
            f"refusing to serve on {bind} without an access token: pass --token "
            "(or set STRATAGATE_WEB_TOKEN), or bind 127.0.0.1"
        )
    names = answered_names(bind) | {host_name(name) for name in extra_hosts}
    return GuardPolicy(frozenset(name for name in names if name), token)


def answered_names(bind: str) -> set[str]:
    """The Host names a server bound to ``bind`` is really reached by: a wildcard bind is
    reached on every interface (the machine's name and addresses, and loopback); a loopback
    address also as ``localhost``; any other address only as itself."""
    bind = host_name(bind)
    if bind in WILDCARD_BINDS:
        return {bind, *LOOPBACK_NAMES, *machine_names()}
    if bind == "localhost" or _is_loopback(bind):
        return {bind, *LOOPBACK_NAMES}
    return {bind}


def machine_names() -> set[str]:
    """This machine's host name and the addresses it resolves to (no network query beyond
    the resolver's own files and cache; a resolver failure leaves just the name)."""
    name = socket.gethostname().lower()
    names = {name}
    try:
        found = socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
    except OSError:
        return names
    for _, _, _, _, address in found:
        names.add(str(address[0]).split("%", 1)[0].lower())
    return names


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


class Guard:
    """Pure ASGI middleware applying a ``GuardPolicy``."""

    def __init__(self, app: ASGIApp, policy: GuardPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await _plain(send, *refusal)
            return
        given = _query_token(scope)
        if self.policy.token and given is not None and _same(given, self.policy.token):
            await self._accept_token(scope, send)
            return
        limit = self.policy.body_limit(scope["path"])
        await self.app(scope, self._limited(receive, limit), _secured(send))

    def _refusal(self, scope: Scope, headers: Headers) -> tuple[int, str] | None:
        if host_name(headers.get("host", "")) not in self.policy.hosts:
            return 421, (
                "refused: this server does not answer to that Host name (start it with "
                "--allowed-host NAME to add one)"
            )
        if scope["method"] in UNSAFE_METHODS and _cross_site(headers):
            return 403, "refused: a cross-site request may not change anything here"
        length, limit = headers.get("content-length"), self.policy.body_limit(scope["path"])
        if length is not None and (not length.isdigit() or int(length) > limit):
            return 413, f"refused: the request body is over {limit} bytes"
        token = self.policy.token
        given = _query_token(scope)
        query_ok = given is not None and _same(given, token or "")
        if token and not self._has_token(scope, headers) and not query_ok:
            return 401, "refused: open the link with ?token=… that `stratagate serve` printed"
        return None

    def _has_token(self, scope: Scope, headers: Headers) -> bool:
        token = self.policy.token or ""
        bearer = headers.get("authorization", "")
        if bearer.lower().startswith("bearer ") and _same(bearer[7:].strip(), token):
            return True
        return any(
            _same(value, token) for value in cookie_values(headers.getlist("cookie"), TOKEN_COOKIE)
        )

    async def _accept_token(self, scope: Scope, send: Send) -> None:
        """``?token=`` right: remember it in a cookie and drop it from the address bar."""
        query = {k: v for k, v in parse_qs(scope.get("query_string", b"").decode()).items()}
        query.pop("token", None)
        location = scope["path"] + (f"?{urlencode(query, doseq=True)}" if query else "")
        cookie = f"{TOKEN_COOKIE}={self.policy.token}; Path=/; HttpOnly; SameSite=Strict"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [(b"location", location.encode()), (b"set-cookie", cookie.encode())],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    def _limited(self, receive: Receive, limit: int) -> Receive:
        """A body without Content-Length (chunked) is counted as it arrives."""
        seen = 0

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        return limited_receive


class BodyTooLarge(Exception):
    """Raised into the view reading a chunked body over the limit (answered with 413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the request body is over {limit} bytes")


def _secured(send: Send) -> Send:
    """Adds the security headers; redacts HTML and JSON bodies (buffered: they are small)."""
    start: Message | None = None
    chunks: list[bytes] = []

    async def secured_send(message: Message) -> None:
        nonlocal start
        if message["type"] == "http.response.start":
            headers = [*message.get("headers", []), *SECURITY_HEADERS]
            start = {**message, "headers": headers}
            if not _redacted_type(headers):
                await send(start)
                start = None
            return
        if start is None or message["type"] != "http.response.body":
            await send(message)
            return
        chunks.append(message.get("body", b""))
        if message.get("more_body"):
            return
        body = redacted_body(b"".join(chunks))
        headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return secured_send


SCANNED_KEPT = 256  # the bodies whose scan changed nothing, by digest (16 bytes each)
_SCANNED: OrderedDict[bytes, None] = OrderedDict()


def redacted_body(body: bytes) -> bytes:
    """``redact_secrets`` over a response body; a body the same as one scanned lately and
    found clean is sent as it is (the scan is a pass over the page per key prefix and
    label: ~8 ms for a 150 KB page of block cards, which a reader opens again and again)."""
    digest = hashlib.blake2b(body, digest_size=16).digest()
    if digest in _SCANNED:
        _SCANNED.move_to_end(digest)
        return body
    redacted = redact_secrets(body.decode("utf-8", "replace")).encode()
    if redacted == body:  # clean (and valid UTF-8): the next such body is not scanned
        _SCANNED[digest] = None
        if len(_SCANNED) > SCANNED_KEPT:
            _SCANNED.popitem(last=False)
    return redacted


def _redacted_type(headers: list[tuple[bytes, bytes]]) -> bool:
    content_type = next((v for k, v in headers if k.lower() == b"content-type"), b"")
    return content_type.startswith(_REDACTED_TYPES)


def _cross_site(headers: Headers) -> bool:
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site not in ("same-origin", "none")
    origin = headers.get("origin")
    if origin is None:
        return False
    return origin == "null" or urlsplit(origin).netloc.lower() != headers.get("host", "").lower()


def cookie_values(headers: Iterable[str], name: str) -> list[str]:
    """Every value of cookie ``name`` in ``Cookie`` headers, each pair read on its own:
    ``http.cookies`` drops the whole header at the first pair it dislikes (a space in a
    value), and browsers send such pairs."""
    values = []
    for header in headers:
        for pair in header.split(";"):
            key, sep, value = pair.partition("=")
            if sep and key.strip() == name:
                values.append(value.strip().strip('"'))
    return values


def host_name(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _query_token(scope: Scope) -> str | None:
    values = parse_qs(scope.get("query_string", b"").decode()).get("token")
    return values[0] if values else None


def _same(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), *SECURITY_HEADERS]
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

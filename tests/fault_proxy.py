"""A fault-injecting HTTP proxy on loopback, in front of a real S3 API (moto's server).

Every `every`-th request is answered with a fault instead of being forwarded, taking turns: 503 SlowDown (S3's
throttling reply), 500 InternalError, and a connection dropped without any reply. Everything else is passed through
unchanged, so what reaches the store is exactly what the client sent.
"""

from __future__ import annotations

import http.client
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

FAULTS = ("slow_down", "internal_error", "dropped")
_ERROR_BODY = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code><Message>{message}</Message></Error>'


class FaultProxy:
    def __init__(self, upstream: str, every: int = 4) -> None:
        self.upstream = urlsplit(upstream)
        self.every = every
        self.injected: Counter[str] = Counter()
        self.forwarded = 0
        self._lock = threading.Lock()
        self._requests = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next_fault(self) -> str | None:
        with self._lock:
            self._requests += 1
            if self._requests % self.every:
                self.forwarded += 1
                return None
            fault = FAULTS[(self._requests // self.every) % len(FAULTS)]
            self.injected[fault] += 1
            return fault

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

            def _relay(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                fault = proxy._next_fault()
                if fault == "dropped":
                    self.close_connection = True
                    self.connection.close()
                    return
                if fault is not None:
                    status, code = (503, "SlowDown") if fault == "slow_down" else (500, "InternalError")
                    payload = _ERROR_BODY.format(code=code, message="injected by the test proxy").encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                upstream = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
                upstream.request(self.command, self.path, body=body, headers=headers)
                response = upstream.getresponse()
                data = response.read()
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in {"transfer-encoding", "connection", "content-length", "date", "server"}:
                        self.send_header(key, value)
                # A HEAD reply has no body but the object's length: pass the store's on (clients read sizes there).
                length = response.getheader("Content-Length", "0") if self.command == "HEAD" else str(len(data))
                self.send_header("Content-Length", length)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                upstream.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _relay

        return Handler

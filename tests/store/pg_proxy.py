"""A TCP port in front of a test server's unix socket that can stop answering, as a lost host does.

``cut()`` drops every connection it carries and from then on accepts new ones but never
answers them (a client waits until its own connect timeout); ``mend()`` forwards again.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path


class Proxy:
    """Forwards 127.0.0.1:``port`` to the server's socket until cut."""

    def __init__(self, server_socket: Path) -> None:
        self.target = str(server_socket)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._cut = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, schema: str) -> str:
        """A libpq URL through the proxy whose ``search_path`` is ``schema``."""
        return (
            f"postgresql://postgres@127.0.0.1:{self.port}/postgres?options=-csearch_path%3D{schema}"
        )

    def cut(self) -> None:
        """Drop every carried connection; answer no new one."""
        with self._lock:
            self._cut = True
            dropped, self._open = self._open, []
        for sock in dropped:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def mend(self) -> None:
        """Forward new connections again."""
        with self._lock:
            self._cut = False

    def close(self) -> None:
        """Stop listening and drop everything."""
        self.cut()
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._open.append(client)
                if self._cut:
                    continue  # held open, never answered
            upstream = socket.socket(socket.AF_UNIX)
            try:
                upstream.connect(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open.append(upstream)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    # Copy one direction until either side closes; then close both.
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    for sock in (source, sink):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()

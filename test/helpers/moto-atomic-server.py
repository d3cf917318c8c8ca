"""moto's S3 server with atomic conditional writes, for relcast's tests.

moto checks If-Match / If-None-Match in its request handler and writes the
object afterwards, with no lock between the two, on a threaded server: under
heavy load two conditional writes can both pass the check (seen here: 20
concurrent compare-and-swap increments landing 19). Real S3 makes a
conditional write atomic. This serves moto's own application with one lock
around each write request; the request body is read before the lock is
taken, so a slow upload never holds it. Reads stay concurrent.

usage: python3 moto-atomic-server.py <host> [<port>]
With no port (or 0) the system picks a free one; the port bound is printed
on stdout as "port <n>", so two test runs never race for a port.
"""
import io
import signal
import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import make_server
from werkzeug.wsgi import get_input_stream

WRITES = {"PUT", "POST", "DELETE"}
lock = threading.Lock()
moto_app = DomainDispatcherApplication(create_backend_app)


def atomic_writes(environ, start_response):
    if environ.get("REQUEST_METHOD") not in WRITES:
        return moto_app(environ, start_response)
    # Bounded by Content-Length or the chunked framing (a bare read would wait for the socket to close).
    body = get_input_stream(environ).read()
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    with lock:
        return list(moto_app(environ, start_response))


def main():
    host = sys.argv[1]
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server = make_server(host, port, atomic_writes, threaded=True)
    print(f"port {server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

"""moto's S3 server with atomic conditional writes, for relcast's tests.

moto checks If-Match / If-None-Match in its request handler and writes the
object afterwards, with no lock between the two, on a threaded server: under
heavy load two conditional writes can both pass the check (seen here: 20
concurrent compare-and-swap increments landing 19). Real S3 makes a
conditional write atomic. This serves moto's own application with one lock
around each write request; the request body is read before the lock is
taken, so a slow upload never holds it. Reads stay concurrent.

S3 refuses a copy (CopyObject, UploadPartCopy) whose source no longer has
the ETag named in x-amz-copy-source-if-match, with 412; moto ignores the
header. This server checks it, under the same lock, so the copy and the
check see one version of the source, as on S3.

usage: python3 moto-atomic-server.py <host> [<port>]
With no port (or 0) the system picks a free one; the port bound is printed
on stdout as "port <n>", so two test runs never race for a port.
"""
import io
import signal
import sys
import threading
from urllib.parse import unquote, urlparse

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import make_server
from werkzeug.wsgi import get_input_stream

from moto.core import DEFAULT_ACCOUNT_ID
from moto.s3.models import s3_backends

WRITES = {"PUT", "POST", "DELETE"}
COPY_SOURCE_CHANGED = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PreconditionFailed</Code>'
    b"<Message>At least one of the pre-conditions you specified did not hold</Message>"
    b"<Condition>x-amz-copy-source-If-Match</Condition></Error>"
)
lock = threading.Lock()
moto_app = DomainDispatcherApplication(create_backend_app)


def copy_source_changed(environ):
    """True when a copy names an ETag (x-amz-copy-source-if-match) its source no longer has."""
    expected = environ.get("HTTP_X_AMZ_COPY_SOURCE_IF_MATCH")
    source = environ.get("HTTP_X_AMZ_COPY_SOURCE")
    if expected is None or source is None:
        return False
    bucket, _, key = unquote(urlparse(source).path).lstrip("/").partition("/")
    try:
        current = s3_backends[DEFAULT_ACCOUNT_ID]["aws"].get_object(bucket, key)
    except Exception:
        return False  # moto answers a missing bucket or key itself
    return current is not None and expected.strip('"') != current.etag.strip('"')


def atomic_writes(environ, start_response):
    if environ.get("REQUEST_METHOD") not in WRITES:
        return moto_app(environ, start_response)
    # Bounded by Content-Length or the chunked framing (a bare read would wait for the socket to close).
    body = get_input_stream(environ).read()
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    with lock:
        if copy_source_changed(environ):
            start_response("412 Precondition Failed", [("Content-Type", "application/xml"), ("Content-Length", str(len(COPY_SOURCE_CHANGED)))])
            return [COPY_SOURCE_CHANGED]
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

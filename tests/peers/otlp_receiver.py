"""Test peer: a loopback OTLP/HTTP trace receiver that keeps what it is sent and shows it as JSON.

Usage:
    otlp_receiver.py [--port N]   listen on http://127.0.0.1:N (N=0: a free port) and print one line
                                  "PORT=<port>" to stdout once listening

POST /v1/traces takes an OTLP ExportTraceServiceRequest in protobuf (Content-Type
application/x-protobuf, gzip or not), decoded with the `opentelemetry-proto` package, the way a
collector takes it; anything else there is refused with 400 (an exporter that sends JSON or garbage
fails the test instead of passing it). GET /spans answers every span received so far, in arrival
order, as a JSON list of objects:
    {"service": str, "scope": str, "name": str, "kind": "server" | "client" | "internal" | ...,
     "trace_id": hex, "span_id": hex, "parent_span_id": hex or "",
     "attributes": {key: value}, "status": {"code": "unset" | "ok" | "error", "message": str},
     "events": [{"name": str, "attributes": {...}}], "links": [{"trace_id": hex, "span_id": hex}]}
DELETE /spans forgets them.
"""

import argparse
import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
STATUS = {0: "unset", 1: "ok", 2: "error"}

spans: list[dict] = []
lock = threading.Lock()


def value(any_value):
    """An OTLP AnyValue as plain JSON."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return attributes(any_value.kvlist_value.values)
    if kind == "bytes_value":
        return any_value.bytes_value.hex()
    return getattr(any_value, kind) if kind else None


def attributes(key_values) -> dict:
    return {kv.key: value(kv.value) for kv in key_values}


def flatten(request: ExportTraceServiceRequest) -> list[dict]:
    out = []
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                out.append(
                    {
                        "service": resource.get("service.name", ""),
                        "scope": scope_spans.scope.name,
                        "name": span.name,
                        "kind": KINDS.get(span.kind, str(span.kind)),
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "attributes": attributes(span.attributes),
                        "status": {
                            "code": STATUS.get(span.status.code, str(span.status.code)),
                            "message": span.status.message,
                        },
                        "events": [
                            {"name": e.name, "attributes": attributes(e.attributes)}
                            for e in span.events
                        ],
                        "links": [
                            {"trace_id": link.trace_id.hex(), "span_id": link.span_id.hex()}
                            for link in span.links
                        ],
                    }
                )
    return out


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/v1/traces":
            return self.answer(404, b"only /v1/traces", "text/plain")
        if not self.headers.get("Content-Type", "").startswith("application/x-protobuf"):
            return self.answer(400, b"OTLP/HTTP protobuf only", "text/plain")
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except DecodeError as error:
            return self.answer(400, str(error).encode(), "text/plain")
        received = flatten(request)
        with lock:
            spans.extend(received)
        reply = ExportTraceServiceResponse().SerializeToString()
        self.answer(200, reply, "application/x-protobuf")

    def do_GET(self):
        if self.path != "/spans":
            return self.answer(404, b"only /spans", "text/plain")
        with lock:
            body = json.dumps(spans).encode()
        self.answer(200, body, "application/json")

    def do_DELETE(self):
        with lock:
            spans.clear()
        self.answer(204, b"", "text/plain")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"PORT={server.server_address[1]}", flush=True)
    sys.stdout.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()

"""An interceptor (hook) of mcp-bridge, for its tests: a plain `http.server`.

Usage: hook_server.py

Binds 127.0.0.1 on a free port and prints exactly one line "PORT=<port>" to stdout once listening.
Every POST body is a question of the bridge, {phase, kind, caller, name, server_id, arguments | result};
each is kept, with the Authorization header it came with, and answered by the path:

    POST /guard   before: {"decision": "deny", "reason": ...} when the arguments (or, for a resource,
                  the URI, percent-decoded) hold "DROP TABLE" in any case, else allow;
                  after: {"decision": "modify", "result": ...} with every e-mail address in a "text"
                  field of the result replaced by "[redacted]", or allow when there is none
    POST /allow   always {"decision": "allow"}
    POST /slow    sleeps 5 s, then allows (a hook that times out)
    POST /broken  answers 200 with a body that is not JSON
    GET  /seen    the questions kept so far, oldest first, each as {"authorization": ..., "body": ...}
"""

import json
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
SEEN = []
LOCK = threading.Lock()


def redact(value):
    """`value` with the e-mail addresses of its "text" fields redacted, and whether any was."""
    if isinstance(value, dict):
        changed = False
        out = {}
        for key, item in value.items():
            if key == "text" and isinstance(item, str):
                new = EMAIL.sub("[redacted]", item)
                changed |= new != item
                out[key] = new
            else:
                out[key], was = redact(item)
                changed |= was
        return out, changed
    if isinstance(value, list):
        pairs = [redact(item) for item in value]
        return [item for item, _ in pairs], any(was for _, was in pairs)
    return value, False


def guard(question):
    if question["phase"] == "before":
        said = json.dumps(question.get("arguments"))
        if question["kind"] == "resource":
            said = urllib.parse.unquote(question["name"])
        if "drop table" in said.lower():
            return {"decision": "deny", "reason": "SQL statements are not allowed in arguments"}
        return {"decision": "allow"}
    result, changed = redact(question.get("result"))
    if changed:
        return {"decision": "modify", "result": result}
    return {"decision": "allow"}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body: bytes, content_type="application/json"):
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path != "/seen":
            return self.answer(404, b"{}")
        with LOCK:
            body = json.dumps(SEEN).encode()
        self.answer(200, body)

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        question = json.loads(self.rfile.read(length) or b"{}")
        with LOCK:
            SEEN.append({"authorization": self.headers.get("authorization"), "path": self.path, "body": question})
        if self.path == "/guard":
            return self.answer(200, json.dumps(guard(question)).encode())
        if self.path == "/allow":
            return self.answer(200, b'{"decision": "allow"}')
        if self.path == "/slow":
            time.sleep(5)
            return self.answer(200, b'{"decision": "allow"}')
        if self.path == "/broken":
            return self.answer(200, b"<html>not a decision</html>", "text/html")
        self.answer(404, b"{}")


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    sys.stdout.write(f"PORT={server.server_address[1]}\n")
    sys.stdout.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()

"""A stand-in server for the fuzz tier's self-test (.ci/fuzz.sh).

It serves a two-operation OpenAPI document at /openapi.yaml: GET /api/ok, which
answers 200 to the bearer token the hooks log in for, and POST /api/denied,
which answers 401 whatever it is sent. Schemathesis with the tier's hooks and
configuration must fail against it, naming POST /api/denied. The routes the
hooks call to set themselves up (log in, who am I, tokens, a spare user) answer
as scangate's do, outside the document.

    python .ci/fuzz_selftest.py PORT PASSWORD
"""

import itertools
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DOCUMENT = """\
openapi: 3.1.0
info: {title: fuzz self-test, version: "1"}
security:
  - bearer: []
paths:
  /api/ok:
    get:
      operationId: ok
      responses:
        "200":
          description: fine
          content:
            application/json:
              schema: {type: object, required: [ok], properties: {ok: {const: true}}}
        "401": {description: no token}
  /api/denied:
    post:
      operationId: denied
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, properties: {name: {type: string}}}
      responses:
        "201": {description: made}
        "401": {description: no token}
        "422": {description: invalid}
components:
  securitySchemes:
    bearer: {type: http, scheme: bearer}
"""

TOKEN = "selftest-admin-token"
serial = itertools.count(100)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.command, self.path))

    def reply(self, status, body=None, ctype="application/json"):
        data = b"" if body is None else (body.encode() if isinstance(body, str) else json.dumps(body).encode())
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"null")
        except ValueError:
            return None

    def authorized(self):
        return self.headers.get("Authorization") == f"Bearer {TOKEN}"

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/openapi.yaml":
            return self.reply(200, DOCUMENT, "application/yaml")
        if not self.authorized():
            return self.reply(401)
        if path == "/api/ok":
            return self.reply(200, {"ok": True})
        if path == "/api/users/me":
            return self.reply(200, {"id": 1})
        if path == "/api/auth/tokens":
            return self.reply(200, {"items": [{"id": 1, "kind": "login"}], "next_cursor": None})
        return self.reply(404)

    def do_POST(self):
        path = self.path.split("?")[0]
        body = self.body()
        if path == "/api/auth/token":
            if isinstance(body, dict) and body.get("password") == sys.argv[2]:
                return self.reply(200, {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600})
            return self.reply(401)
        if path == "/api/denied":
            return self.reply(401)  # whatever it is sent: the operation under test
        if not self.authorized():
            return self.reply(401)
        if path == "/api/users":
            return self.reply(201, {"id": 2})
        if path == "/api/auth/tokens":
            return self.reply(201, {"id": next(serial), "access_token": TOKEN})
        return self.reply(404)

    def not_allowed(self):
        self.send_response(405)
        self.send_header("Allow", "GET, POST")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def __getattr__(self, name):  # any other method (PUT, TRACE, QUERY...): 405, as scangate answers
        if name.startswith("do_"):
            return self.not_allowed
        raise AttributeError(name)


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()

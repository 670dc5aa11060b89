"""A webhook receiver that verifies every delivery with the Standard Webhooks
library for Python (PyPI standardwebhooks), as a customer's receiver would.

    python receiver.py [--fail-first N] [--gone]

The signing secret comes from the environment (RECEIVER_SECRET), never from
the command line. It listens on 127.0.0.1 on a free port and prints
"listening PORT" once ready.

POST (any path): a delivery. A delivery whose signature does not verify is
answered 400 and recorded as rejected. A verified one is answered 500 while
fewer than N verified deliveries came before it (--fail-first N), 410 with
--gone, else 204; every verified attempt is recorded with the status it got,
and the event of a 204 is recorded once per id (the receiver deduplicates by
id, as the specification asks receivers to).

GET /log: {"attempts": [{"webhook_id", "status", "body"}], "events": [the
accepted events' bodies, parsed], "rejected": [{"webhook_id", "error"}]}.
"""

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError


class State:
    def __init__(self, secret, fail_first, gone):
        self.webhook = Webhook(secret)
        self.fail_first = fail_first
        self.gone = gone
        self.lock = threading.Lock()
        self.verified = 0
        self.attempts = []
        self.events = []
        self.seen = set()
        self.rejected = []

    def receive(self, body, headers):
        """Verifies one delivery and returns the status to answer."""
        webhook_id = headers.get("webhook-id", "")
        try:
            event = self.webhook.verify(body, headers)
        except (WebhookVerificationError, ValueError) as e:
            with self.lock:
                self.rejected.append({"webhook_id": webhook_id, "error": str(e)})
            return 400
        with self.lock:
            self.verified += 1
            if self.verified <= self.fail_first:
                status = 500
            elif self.gone:
                status = 410
            else:
                status = 204
            self.attempts.append({"webhook_id": webhook_id, "status": status, "body": body.decode()})
            if status == 204 and event["id"] not in self.seen:
                self.seen.add(event["id"])
                self.events.append(event)
        return status

    def log(self):
        with self.lock:
            return {"attempts": self.attempts, "events": self.events, "rejected": self.rejected}


def handler(state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            status = state.receive(body, {k.lower(): v for k, v in self.headers.items()})
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self):
            if self.path != "/log":
                self.send_error(404)
                return
            out = json.dumps(state.log()).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args):
            pass

    return Handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fail-first", type=int, default=0)
    parser.add_argument("--gone", action="store_true")
    args = parser.parse_args()
    secret = os.environ.get("RECEIVER_SECRET")
    if not secret:
        sys.exit("RECEIVER_SECRET is not set")
    state = State(secret, args.fail_first, args.gone)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(state))
    print("listening", server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

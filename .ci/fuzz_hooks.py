"""Schemathesis hooks of the fuzz tier (.ci/fuzz.sh): every request carries a token
that still works when it is sent.

The run is one admin's, and three operations can take that admin's power away
partway through the run: logging out revokes the token the request carries,
revoking a token by id can name the run's own token, and updating a user can
demote or deactivate the admin. Once that happened, every later write answered
401 or 403 and was never tested past the authorizer. So:

  DELETE /api/auth/token             carries a personal token made for that one call
  DELETE /api/auth/tokens/{token_id} naming the run's own token: names a token made
                                     for that one call instead
  PUT /api/users/{user_id}           naming the run's admin: names a second user
                                     (made at the start) instead
  DELETE /api/webhooks/{webhook_id}  naming the run's test subscription
                                     (SCANGATE_FUZZ_WEBHOOK_ID, which .ci/schemathesis.toml
                                     gives to the operations that need one): names a
                                     subscription made for that one call instead
  PUT /api/integrations/{vc_id}      a github_app body gets a real RSA private key
                                     (made once per run with openssl: no generator makes
                                     one from a schema) and loses token; a github or
                                     gitlab body loses app_id, installation_id and
                                     private_key (the document lists every member of both
                                     kinds in one object: which belong to which type is
                                     in its descriptions, not in a form generators read)
  POST /api/auth/tokens              the admin's personal tokens are revoked first (a
                                     user holds at most 20 unexpired ones: past them every
                                     valid request answered 409)
  POST /api/pr/scan/sarif            a log sent as a string (base64 of its gzip, which no
                                     schema can describe) is a real one: a run of a tool
                                     without results, gzipped
  everything else                    the run's admin token

Other generated bodies and queries are left as generated. The server is named by
SCANGATE_FUZZ_URL, the admin's password by SCANGATE_FUZZ_PASSWORD (username
SCANGATE_FUZZ_USERNAME, default admin).
"""

import base64
import functools
import gzip
import itertools
import json
import os
import subprocess

import requests
import schemathesis


class Session:
    """The run's admin: its token, the token's id, its user id and a spare user."""

    def __init__(self, base, username, password):
        self.base = base.rstrip("/")
        self.http = requests.Session()
        self.serial = itertools.count(1)
        r = self.http.post(f"{self.base}/api/auth/token", json={"username": username, "password": password}, timeout=30)
        r.raise_for_status()
        self.token = r.json()["access_token"]
        self.user_id = self._get("/api/users/me")["id"]
        # Tokens are listed newest first: the first login token is the one just made.
        own = [t for t in self._get("/api/auth/tokens")["items"] if t["kind"] == "login"]
        if not own:
            raise RuntimeError("the admin's login token is not listed")
        self.token_id = own[0]["id"]
        name = f"fuzz-spare-{os.getpid()}"
        spare = self._post(
            "/api/users",
            {"username": name, "role": "user", "user_email": f"{name}@example.com", "password": "fuzz-spare-password-1"},
        )
        self.spare_user_id = spare["id"]

    def _headers(self):
        return {"Authorization": f"Bearer {self.token}"}

    def _get(self, path):
        r = self.http.get(self.base + path, headers=self._headers(), timeout=30)
        r.raise_for_status()
        return r.json()

    def _post(self, path, body):
        r = self.http.post(self.base + path, json=body, headers=self._headers(), timeout=30)
        r.raise_for_status()
        return r.json()

    def revoke_personal_tokens(self):
        """Revokes the admin's personal tokens (never its login token), so that one more fits."""
        items = self._get("/api/auth/tokens?limit=100")["items"]
        for t in items:
            if t["kind"] != "login":
                r = self.http.delete(f"{self.base}/api/auth/tokens/{t['id']}", headers=self._headers(), timeout=30)
                if r.status_code not in (204, 404):
                    r.raise_for_status()

    def throwaway_webhook(self):
        """A new subscription, for one call that may delete it: its id."""
        return self._post("/api/webhooks", {"url": "https://hooks.example.com/throwaway", "events": ["webhook.test"]})["id"]

    def throwaway(self):
        """A new personal admin token, for one call that may revoke it: (id, secret)."""
        t = self._post("/api/auth/tokens", {"name": f"fuzz-throwaway-{next(self.serial)}", "expires_in_days": 1})
        return t["id"], t["access_token"]


_session = None


def session():
    global _session  # one login per run, made on the first call
    if _session is None:
        _session = Session(
            os.environ["SCANGATE_FUZZ_URL"],
            os.environ.get("SCANGATE_FUZZ_USERNAME", "admin"),
            os.environ["SCANGATE_FUZZ_PASSWORD"],
        )
    return _session


@functools.cache
def app_key():
    """An RSA private key in PEM, made once per run: a GitHub App's key for PUT /api/integrations."""
    return subprocess.run(
        ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
        check=True, capture_output=True, text=True,
    ).stdout


def integration_body(body):
    """Keeps the members of the body's type: a github_app's with a real key, a token integration's."""
    if not isinstance(body, dict):
        return
    if body.get("type") == "github_app":
        body.pop("token", None)
        body["private_key"] = app_key()
    else:
        for name in ("app_id", "installation_id", "private_key"):
            body.pop(name, None)


def sarif_body(body):
    """A SARIF log sent as a string becomes base64 of a real gzipped log."""
    if isinstance(body, dict) and isinstance(body.get("sarif"), str):
        log = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "fuzz"}}, "results": []}]}
        body["sarif"] = base64.b64encode(gzip.compress(json.dumps(log).encode())).decode()


def same_id(value, want):
    return str(value) == str(want)


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    s = session()
    token = s.token
    op = f"{case.operation.method.upper()} {case.operation.path}"
    params = case.path_parameters if case.path_parameters is not None else {}
    if op == "DELETE /api/auth/token":
        _, token = s.throwaway()
    elif op == "DELETE /api/auth/tokens/{token_id}" and same_id(params.get("token_id"), s.token_id):
        params["token_id"], _ = s.throwaway()
    elif op == "PUT /api/users/{user_id}" and same_id(params.get("user_id"), s.user_id):
        params["user_id"] = s.spare_user_id
    elif op == "DELETE /api/webhooks/{webhook_id}" and same_id(
        params.get("webhook_id"), os.environ.get("SCANGATE_FUZZ_WEBHOOK_ID")
    ):
        params["webhook_id"] = s.throwaway_webhook()
    elif op == "POST /api/auth/tokens":
        s.revoke_personal_tokens()
    elif op == "POST /api/pr/scan/sarif":
        sarif_body(case.body)
    elif op == "PUT /api/integrations/{vc_id}":
        integration_body(case.body)
    if case.headers is None:
        case.headers = {}
    case.headers["Authorization"] = f"Bearer {token}"

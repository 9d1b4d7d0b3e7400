"""Everything this app needs of the marketplace: its settings, OAuth sign-in (code flow with PKCE
and state), the identity and entitlement API, webhook signatures and the embedded page's context
token. The settings come from the environment, else from .env (written by `mkt init`, never
committed): a variable already set wins, so `mkt sandbox exec -- python3 -m unittest` gives the
sandbox's own."""
import base64
import hashlib
import hmac
import json
import os
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime
from functools import cache

import jwt


HERE = os.path.dirname(os.path.abspath(__file__))


def load_env(path=os.path.join(HERE, ".env")):
    """Reads KEY=VALUE lines into the environment (a variable already set wins)."""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                key, sep, value = line.strip().partition("=")
                if sep and not key.startswith("#"):
                    os.environ.setdefault(key.strip(), value.strip().strip('"'))


load_env()


def _required(name):
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f"{name} is not set: run the app from its folder (with its .env), under `mkt sandbox exec`, or run `mkt init` again.")
    return value


SITE_URL = _required("MKT_SITE_URL").rstrip("/")
CLIENT_ID = _required("MKT_CLIENT_ID")
CLIENT_SECRET = _required("MKT_CLIENT_SECRET")
WEBHOOK_SECRET = _required("MKT_WEBHOOK_SECRET")
with open(os.path.join(HERE, "mkt.json"), encoding="utf-8") as _f:
    PORT = int(os.environ.get("PORT") or json.load(_f)["port"])  # mkt.json names the port the app is registered with
SESSION_SECRET = os.environ.get("SESSION_SECRET") or secrets.token_hex(32)  # in .env: a restart signs nobody out
PAID_FEATURE = os.environ.get("PAID_FEATURE", "pro")
APP_URL = f"http://localhost:{PORT}"
REDIRECT_URI = f"{APP_URL}/callback"
API_URL = f"{SITE_URL}/api/v1"


def _request(url, data=None, token=None):
    headers = {"accept": "application/json"}
    if data is not None:
        headers["content-type"] = "application/json"
    if token:
        headers["authorization"] = f"Bearer {token}"
    body = json.dumps(data).encode() if data is not None else None
    with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=10) as res:
        return json.load(res)


@cache
def endpoints():
    """The marketplace's OAuth endpoints, from its RFC 8414 metadata (read once)."""
    return _request(f"{SITE_URL}/.well-known/oauth-authorization-server")


def _b64(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def start_sign_in():
    """Where to send the person to sign in, and the state and verifier the callback must check."""
    state, verifier = secrets.token_urlsafe(24), secrets.token_urlsafe(32)
    query = urllib.parse.urlencode({
        "client_id": CLIENT_ID,
        "redirect_uri": REDIRECT_URI,
        "response_type": "code",
        "scope": "identity:read entitlements:read",
        "state": state,
        "code_challenge": _b64(hashlib.sha256(verifier.encode()).digest()),
        "code_challenge_method": "S256",
    })
    return f"{endpoints()['authorization_endpoint']}?{query}", state, verifier


class SignInRefused(Exception):
    """The marketplace refused the sign-in (a used or expired code, a wrong verifier): the person may try again."""


def finish_sign_in(code, verifier):
    """Exchanges the callback's code for an access token."""
    try:
        answer = _request(endpoints()["token_endpoint"], {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "code_verifier": verifier,
        })
    except urllib.error.HTTPError as err:
        if 400 <= err.code < 500:
            try:
                reason = json.load(err).get("error", f"HTTP {err.code}")
            except ValueError:
                reason = f"HTTP {err.code}"
            raise SignInRefused(reason) from err
        raise
    return answer["access_token"]


def _api(path, token):
    try:
        return _request(f"{API_URL}{path}", token=token)
    except urllib.error.HTTPError as err:
        if err.code == 404:
            return None
        raise


def whoami(token):
    return _api("/whoami", token)


def may_use_paid_feature(token):
    """True when the user's entitlement grants the paid feature (asked each time: plans change)."""
    e = _api("/entitlements", token)
    return e is not None and e.get("status") != "expired" and PAID_FEATURE in e.get("features", [])


def check_webhook(raw, signature, now=None, tolerance_s=300):
    """Checks a delivery as the marketplace signs it: `sha256=` + hex HMAC-SHA256 of the raw body,
    keyed with the whole `whsec_…` secret; then that its timestamp is within `tolerance_s` of now
    (mkt's forwards of late deliveries carry a fresh timestamp). Returns (envelope, None, None) or
    (None, status, reason)."""
    expected = "sha256=" + hmac.new(WEBHOOK_SECRET.encode(), raw, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), (signature or "").encode()):
        return None, 401, "bad signature"
    try:
        envelope = json.loads(raw)
        at = datetime.fromisoformat(envelope["timestamp"].replace("Z", "+00:00")).timestamp()
        envelope["event"].encode()
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, 400, "not an event envelope"
    if not abs((now or time.time()) - at) <= tolerance_s:
        return None, 401, "timestamp outside the tolerance"
    return envelope, None, None


def check_context_token(token):
    """The user an embedded page is shown to, from the dashboard's signed context token."""
    claims = jwt.decode(token, CLIENT_SECRET, algorithms=["HS256"], issuer=SITE_URL, audience=CLIENT_ID,
                        options={"require": ["exp", "iat", "sub"]})
    return claims["sub"]

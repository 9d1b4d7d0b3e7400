"""`python3 -m unittest` from the app's folder: the app's own checks, and its sign-in against the
marketplace. The settings come from the environment (`mkt sandbox exec --seed mkt.fixtures.json --
python3 -m unittest` gives a fresh sandbox's), else from .env."""
import hashlib
import hmac
import json
import time
import unittest
import urllib.request
from datetime import datetime, timezone

import jwt

import marketplace as mp
from app import app


def delivery(at=None):
    stamp = datetime.fromtimestamp(at or time.time(), timezone.utc).isoformat().replace("+00:00", "Z")
    return json.dumps({"event": "subscription.created", "timestamp": stamp, "data": {}}).encode()


def sign(body):
    return "sha256=" + hmac.new(mp.WEBHOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()


class AppTest(unittest.TestCase):
    def setUp(self):
        self.client = app.test_client()

    def test_signed_delivery_is_accepted_once(self):
        body = delivery()
        headers = {"X-Marketplace-Signature": sign(body), "X-Marketplace-Delivery": "dlv_1"}
        self.assertEqual(self.client.post("/webhooks", data=body, headers=headers).status_code, 204)
        self.assertEqual(self.client.post("/webhooks", data=body, headers=headers).status_code, 204)

    def test_changed_or_old_delivery_is_refused(self):
        body = delivery()
        self.assertEqual(self.client.post("/webhooks", data=body + b" ", headers={"X-Marketplace-Signature": sign(body)}).status_code, 401)
        for at in (time.time() - 360, time.time() + 360):  # outside the 5-minute tolerance, either way
            stale = delivery(at)
            self.assertEqual(self.client.post("/webhooks", data=stale, headers={"X-Marketplace-Signature": sign(stale)}).status_code, 401)

    def test_context_token_names_its_user(self):
        claims = {"iss": mp.SITE_URL, "sub": "usr_1", "iat": int(time.time()), "exp": int(time.time()) + 300}
        good = jwt.encode({**claims, "aud": mp.CLIENT_ID}, mp.CLIENT_SECRET, algorithm="HS256")
        other = jwt.encode({**claims, "aud": "cid_other"}, mp.CLIENT_SECRET, algorithm="HS256")
        self.assertIn(b"usr_1", self.client.get(f"/embed?context_token={good}").data)
        self.assertEqual(self.client.get(f"/embed?context_token={other}").status_code, 401)

    def test_marketplace_takes_the_sign_in_request(self):
        url, _, _ = mp.start_sign_in()
        with urllib.request.urlopen(url, timeout=10) as res:
            self.assertEqual(res.status, 200)


if __name__ == "__main__":
    unittest.main()

"""A marketplace app. Sign-in with the marketplace, a paid feature behind an entitlement
check, a webhook route that verifies every delivery, and the page the dashboard embeds."""
import os

from flask import Flask, redirect, render_template_string, request, session

import marketplace as mp

APP_NAME = os.environ.get("APP_NAME", "Marketplace app")

app = Flask(__name__)
app.secret_key = mp.SESSION_SECRET  # from .env: sessions outlast a restart
app.config["MAX_CONTENT_LENGTH"] = 1024 * 1024  # a larger delivery is answered 413
seen = set()  # delivery ids already handled: use your database in production

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{{ title }} · {{ app_name }}</title></head>
<body><main><h1>{{ title }}</h1>{% block body %}{% endblock %}</main></body></html>"""


def page(title, body, status=200, **values):
    return render_template_string(PAGE.replace("{% block body %}{% endblock %}", body), title=title, app_name=APP_NAME, **values), status


@app.get("/")
def home():
    user = session.get("user")
    if not user:
        return page(APP_NAME, '<p><a href="/login">Sign in with the marketplace</a></p>')
    return page(APP_NAME, '<p>Signed in as <strong>{{ user.name }}</strong> ({{ user.email }}).</p>'
                '<p><a href="/reports">Reports</a> (a paid feature)</p>'
                '<form method="post" action="/logout"><button>Sign out</button></form>', user=user)


@app.get("/login")
def login():
    url, state, verifier = mp.start_sign_in()
    session["signin"] = {"state": state, "verifier": verifier}  # bound to this browser
    return redirect(url)


@app.get("/callback")
def callback():
    pending = session.pop("signin", None)
    if request.args.get("error"):
        return page("Not signed in", "<p>{{ error }}</p>", 403, error=request.args["error"])
    if not pending or request.args.get("state") != pending["state"]:
        return page("Not signed in", '<p>The sign-in expired or came from elsewhere: <a href="/login">try again</a>.</p>', 400)
    try:
        token = mp.finish_sign_in(request.args.get("code", ""), pending["verifier"])
    except mp.SignInRefused as err:  # a code used twice (a reload, the back button) or expired
        return page("Not signed in", '<p>The marketplace refused this sign-in ({{ e }}). <a href="/login">Sign in again</a>.</p>', 400, e=str(err))
    user = mp.whoami(token)
    if not user:
        return page("Not signed in", "<p>The marketplace does not know this user.</p>", 403)
    session["user"], session["token"] = {"id": user["id"], "name": user["name"], "email": user["email"]}, token
    return redirect("/")


@app.post("/logout")
def logout():
    session.clear()
    return redirect("/")


@app.get("/reports")
def reports():
    """The paid feature: the entitlement is asked at each use, so a plan change applies at once."""
    if "token" not in session:
        return redirect("/login")
    if not mp.may_use_paid_feature(session["token"]):
        return page("Upgrade to use reports", "<p>Your plan does not include <code>{{ f }}</code>.</p>", 402, f=mp.PAID_FEATURE)
    return page("Reports", "<p>Here are your reports, {{ user.name }}.</p>", user=session["user"])


@app.post("/webhooks")
def webhooks():
    """The signature is checked over the raw bytes before anything else; the answer is fast, and a
    delivery id seen before is acknowledged without doing the work twice. An event this app does not
    know is acknowledged too (2xx), so the marketplace does not retry it."""
    envelope, status, reason = mp.check_webhook(request.get_data(), request.headers.get("X-Marketplace-Signature"))
    if envelope is None:
        print(f"webhook refused: {reason}", flush=True)
        return reason, status
    delivery = request.headers.get("X-Marketplace-Delivery")
    if not delivery or delivery not in seen:  # a delivery without an id cannot be a duplicate
        if delivery:
            seen.add(delivery)
        print(f"webhook verified: {envelope['event']} {envelope.get('data')}", flush=True)
    return "", 204


@app.get("/embed")
def embed():
    """The page the marketplace's dashboard frames, with a signed context token naming the user."""
    try:
        user = mp.check_context_token(request.args.get("context_token", ""))
    except Exception as err:  # noqa: BLE001 - any failure means: not verified
        return page("Not verified", "<p>The context token does not verify: {{ e }}</p>", 401, e=str(err))
    return page(APP_NAME, "<p>Embedded for <strong>{{ u }}</strong>.</p>", u=user)


if __name__ == "__main__":
    if os.environ.get("WERKZEUG_RUN_MAIN"):  # the reloader's child, the one that serves
        print(f"{APP_NAME} on {mp.APP_URL}", flush=True)
    # The reloader starts the app again when a file of it changes (`mkt dev` runs it this way).
    app.run(host="127.0.0.1", port=mp.PORT, use_reloader=True)

// The developer's token for the benches, as a person gets it: the consent page, Approve as the
// developer, the token endpoint (a grant may make 1,000 requests a minute: docs/PROTOCOL.md).
export async function developerToken(port, seed, scope = 'apps:write') {
  const site = `http://127.0.0.1:${port}`;
  const redirectUri = 'http://127.0.0.1:9/callback';
  const query = new URLSearchParams({
    client_id: seed.app.client_id,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope,
  });
  const page = await (await fetch(`${site}/oauth/authorize?${query}`)).text();
  const form = new URLSearchParams({ user_id: seed.developer.id, decision: 'approve' });
  for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g))
    form.set(m[1], m[2]);
  const consent = await fetch(`${site}/oauth/authorize`, { method: 'POST', body: form, redirect: 'manual' });
  const code = new URL(consent.headers.get('location')).searchParams.get('code');
  const res = await fetch(`${site}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: seed.app.client_id,
      client_secret: seed.app.client_secret,
    }),
  });
  if (res.status !== 200) throw new Error(`token endpoint: ${res.status} ${await res.text()}`);
  return (await res.json()).access_token;
}

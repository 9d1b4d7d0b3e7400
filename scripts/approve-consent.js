#!/usr/bin/env node
// Plays the person at the sandbox's consent page for the demo (MKT_BROWSER runs it with the URL as
// its last argument): approves as APPROVE_AS (a user id; default: the first user listed) and
// follows the redirect to mkt's loopback listener, as a browser would.
const url = process.argv.at(-1);
const page = await fetch(url);
const html = await page.text();
const unescape = (v) =>
  v
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
const form = new URLSearchParams();
for (const [input] of html.matchAll(/<input[^>]*type="hidden"[^>]*>/g)) {
  const name = /name="([^"]*)"/.exec(input)?.[1];
  if (name) form.set(name, unescape(/value="([^"]*)"/.exec(input)?.[1] ?? ''));
}
form.set('user_id', process.env.APPROVE_AS || /<option[^>]*value="([^"]+)"/.exec(html)?.[1] || '');
form.set('decision', 'approve');
const answer = await fetch(new URL('/oauth/authorize', url), {
  method: 'POST',
  body: form,
  redirect: 'manual',
});
const location = answer.headers.get('location');
if (!location) {
  console.error(`The consent page did not redirect (HTTP ${answer.status}).`);
  process.exit(1);
}
await fetch(location);

#!/usr/bin/env node
// Plays the person at one of the sandbox's approval pages for the demo — the consent page
// (MKT_BROWSER runs it with the URL as its last argument) or the payment processor's connect page:
// approves (on the consent page as APPROVE_AS, a user id; default: the first user listed) and
// follows a redirect (to mkt's loopback listener), as a browser would.
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
const action = unescape(/<form[^>]*action="([^"]*)"/.exec(html)?.[1] ?? '/oauth/authorize');
const answer = await fetch(new URL(action, url), {
  method: 'POST',
  body: form,
  redirect: 'manual',
  headers: { origin: new URL(url).origin },
});
const location = answer.headers.get('location');
if (location) await fetch(location);
else if (!answer.ok) {
  console.error(`The page refused the approval (HTTP ${answer.status}).`);
  process.exit(1);
}

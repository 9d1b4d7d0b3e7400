import type { Context } from 'hono';
import type { Child } from 'hono/jsx';

const STYLE = `body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
code{background:#f2f2f4;padding:0 .25rem;border-radius:3px}
.error{border-left:4px solid #c62828;padding:.5rem 1rem;background:#fdecea}
button{font-size:1rem;padding:.5rem 1.25rem;margin-right:.5rem}
iframe{width:100%;height:70vh;border:1px solid #ccc}`;

/** The frame every sandbox page shares; every value in it is escaped by the JSX renderer. */
export function Layout(props: { title: string; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{props.title} · mkt sandbox</title>
        <style>{STYLE}</style>
      </head>
      <body>{props.children}</body>
    </html>
  );
}

/** A request error shown on the page (never redirected). */
export function errorPage(title: string, code: string, message: string) {
  return (
    <Layout title={title}>
      <h1>{title}</h1>
      <div class="error">
        <p>
          <strong id="error-code">{code}</strong>
        </p>
        <p id="error-message">{message}</p>
      </div>
    </Layout>
  );
}

const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http: https:; frame-src http: https:";

/** No other page may frame a sandbox page (clickjacking on consent and payouts). */
const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'content-security-policy': `${CSP}; frame-ancestors 'none'`,
};

/**
 * A dashboard page may be framed by this sandbox's own pages (the console's Preview) and nobody else:
 * CSP `frame-ancestors 'self'`, which browsers apply instead of X-Frame-Options.
 */
const FRAMEABLE_BY_SELF_HEADERS = {
  'cache-control': 'no-store',
  'content-security-policy': `${CSP}; frame-ancestors 'self'`,
};

/** Answers a rendered page with the sandbox's page headers (`framedBy: 'self'` for the dashboard). */
export function page(
  c: Context,
  status: number,
  element: unknown,
  options: { framedBy?: 'self' } = {},
): Response {
  const headers = options.framedBy === 'self' ? FRAMEABLE_BY_SELF_HEADERS : PAGE_HEADERS;
  return c.html(`<!doctype html>\n${String(element)}`, status as 200, headers);
}

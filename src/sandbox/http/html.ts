const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** The page frame every sandbox page shares. */
export function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · mkt sandbox</title>
<style>
body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
code{background:#f2f2f4;padding:0 .25rem;border-radius:3px}
.error{border-left:4px solid #c62828;padding:.5rem 1rem;background:#fdecea}
button{font-size:1rem;padding:.5rem 1.25rem;margin-right:.5rem}
iframe{width:100%;height:70vh;border:1px solid #ccc}
</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/** A request error shown on the page (never redirected). */
export function errorPage(title: string, code: string, message: string): string {
  return layout(
    title,
    `<h1>${escapeHtml(title)}</h1>
<div class="error"><p><strong id="error-code">${escapeHtml(code)}</strong></p><p id="error-message">${escapeHtml(message)}</p></div>`,
  );
}

// The console's stylesheet and its one small script, served from /console/assets/ (a strict CSP
// allows no inline code). The pages work without the script; it only adds live updates.

/** The stylesheet: system fonts, colours chosen for WCAG AA contrast on white and on the header. */
export const CONSOLE_CSS = `
:root{--ink:#1b1f24;--muted:#4b5563;--line:#d0d7de;--bg:#f6f8fa;--accent:#0b5cad;--ok:#116329;--warn:#7d4e00;--bad:#a40e26}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
/* visually hidden, still read by screen readers */
.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:.5rem;background:#fff;padding:.25rem .5rem;z-index:2}
header.top{background:#1f2937;color:#fff;padding:.6rem 1.5rem;display:flex;gap:1.5rem;align-items:center;flex-wrap:wrap}
header.top .brand{font-weight:700;color:#fff;text-decoration:none;font-size:1.05rem}
header.top .who{margin-left:auto;color:#e5e7eb;font-size:.9rem;display:flex;gap:.75rem;align-items:center}
header.top form{margin:0}
header.top button{background:transparent;color:#fff;border:1px solid #9ca3af;border-radius:6px;padding:.2rem .7rem;font-size:.85rem;cursor:pointer}
nav.tabs{background:#fff;border-bottom:1px solid var(--line);padding:0 1.5rem;display:flex;gap:.25rem;flex-wrap:wrap;align-items:center}
nav.tabs a{display:inline-block;padding:.65rem .8rem;color:var(--ink);text-decoration:none;border-bottom:3px solid transparent}
nav.tabs a[aria-current=page]{border-bottom-color:var(--accent);font-weight:600;color:var(--accent)}
nav.tabs .app-name{font-weight:700;margin-right:1rem}
main{max-width:80rem;margin:0 auto;padding:1.25rem 1.5rem 3rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}h2{font-size:1.15rem;margin:0 0 .75rem}
section.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:1rem 1.25rem;margin-bottom:1.25rem}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(20rem,1fr));gap:1.25rem}
dl.fields{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;margin:0}
dl.fields dt{color:var(--muted)}dl.fields dd{margin:0;overflow-wrap:anywhere}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em}
pre{background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.6rem .8rem;overflow:auto;max-height:20rem;white-space:pre-wrap;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%}
.table-wrap{overflow-x:auto}
td.mono,td.nowrap{white-space:nowrap}
th,td{text-align:left;padding:.45rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.85rem;color:var(--muted);font-weight:600;background:var(--bg)}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:0 .5rem;border-radius:999px;font-size:.8rem;font-weight:600;border:1px solid currentColor}
.s-ok{color:var(--ok)}.s-warn{color:var(--warn)}.s-bad{color:var(--bad)}.s-muted{color:var(--muted)}
form.inline{display:inline}
form.stack{display:grid;gap:.6rem;max-width:34rem}
form.row{display:flex;gap:.6rem;flex-wrap:wrap;align-items:end}
label{display:grid;gap:.2rem;font-size:.9rem;font-weight:600}
label span.hint{font-weight:400;color:var(--muted);font-size:.82rem}
input,select,textarea{font:inherit;font-weight:400;padding:.4rem .55rem;border:1px solid #8c959f;border-radius:6px;background:#fff;color:var(--ink)}
textarea{min-height:4.5rem}
label.check{display:flex;gap:.5rem;align-items:center;font-weight:400}
.pair{display:flex;gap:.6rem;flex-wrap:wrap;align-items:end}
.flash-text{margin:0}
button{font:inherit;padding:.4rem .9rem;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer}
button.secondary{background:#fff;color:var(--accent)}
button.danger{background:#fff;color:var(--bad);border-color:var(--bad)}
.flash{border-radius:8px;padding:.75rem 1rem;margin-bottom:1.25rem;border:1px solid}
.flash.ok{background:#e6f4ea;border-color:#8cc79f;color:#0b3d1b}.flash.error{background:#fdecee;border-color:#e8a0aa;color:#6b0714}
.secret{margin-top:.5rem;background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:.5rem .75rem;color:#3b2300}
.secret code{font-size:.95rem;user-select:all;word-break:break-all}
.empty{color:var(--muted);font-style:italic}
.muted{color:var(--muted)}
iframe.preview{width:100%;height:36rem;border:1px solid var(--line);border-radius:8px;background:#fff}
#live-status{font-size:.85rem}
`;

/** The console's script: the request log page's live rows (Server-Sent Events), nothing else. */
export const CONSOLE_JS = `
(function () {
  var table = document.getElementById('log-rows');
  if (!table || !window.EventSource) return;
  var status = document.getElementById('live-status');
  var source = new EventSource(table.getAttribute('data-stream'));
  var empty = document.getElementById('log-empty');
  function cell(text, cls) {
    var td = document.createElement('td');
    td.textContent = text == null ? '' : String(text);
    if (cls) td.className = cls;
    return td;
  }
  source.addEventListener('open', function () { if (status) status.textContent = 'Live: new requests appear as they happen.'; });
  source.addEventListener('error', function () { if (status) status.textContent = 'Reconnecting to the live log…'; });
  source.addEventListener('request', function (event) {
    var e;
    try { e = JSON.parse(event.data); } catch (err) { return; }
    if (document.getElementById(e.id)) return;
    var tr = document.createElement('tr');
    tr.id = e.id;
    var s = Number(e.status);
    var cls = s >= 500 ? 's-bad' : s >= 400 ? 's-warn' : 's-ok';
    var at = cell(String(e.at).slice(11, 23), 'nowrap');
    at.title = e.at;
    tr.appendChild(at);
    tr.appendChild(cell(e.status, 'num ' + cls));
    tr.appendChild(cell(e.method));
    var params = Object.keys(e.params || {}).map(function (k) { return k + '=' + e.params[k]; }).join(' ');
    tr.appendChild(cell(params ? e.path + ' ' + params : e.path, 'mono'));
    tr.appendChild(cell(e.latency_ms + ' ms', 'num'));
    tr.appendChild(cell(e.credential ? e.credential.kind + ':' + e.credential.id : '-', 'mono'));
    tr.appendChild(cell(e.user_id || '-', 'mono'));
    tr.appendChild(cell(e.error_code || ''));
    tr.appendChild(cell(e.id, 'mono'));
    table.insertBefore(tr, table.firstChild);
    if (empty) empty.remove();
    while (table.children.length > 500) table.removeChild(table.lastChild);
  });
})();
`;

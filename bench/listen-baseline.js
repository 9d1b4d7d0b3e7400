// The baselines of bench/listen.js: bare node:http servers that verify each delivery's HMAC over its
// raw bytes in constant time and forward the same bytes and headers to the target, each in a process
// of its own (forked by bench/listen.js, which is told its address):
//   node bench/listen-baseline.js bare TARGET_URL node:http|undici
//     forwards, then answers 202 once the target has it; writes nothing;
//   node bench/listen-baseline.js durable TARGET_URL node:http FILE
//     listen's promise as the issue states it: the body appended to FILE and on disk (O_APPEND|O_DSYNC,
//     one write for the bodies that arrive together: group commit) before the 202, then forwarded;
//   node bench/listen-baseline.js records TARGET_URL node:http FILE
//     the same, writing what listen journals instead of the bare body: a JSON line with the delivery's
//     headers and body before the 202 (what `resend` sends again), and one with the forward's outcome
//     once the target answered (what keeps a crash from forwarding it again): listen's bytes on disk.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { constants, openSync, write } from 'node:fs';
import http from 'node:http';

const [mode, targetUrl, client, file] = process.argv.slice(2);
const SECRET = 'whsec_bench';
const NEWLINE = Buffer.from('\n');

const append = mode === 'bare' ? undefined : groupCommit(file);
const agent = new http.Agent({ keepAlive: true });
const pool = client === 'undici' ? new (await import('undici')).Pool(new URL(targetUrl).origin) : null;

/** The JSON line listen journals for a delivery as it arrived (src/webhooks/listen/intake.ts). */
const receipt = ({ 'content-length': _length, ...headers }, body) =>
  `${JSON.stringify({
    t: 'received',
    id: headers['x-marketplace-delivery'],
    at: new Date().toISOString(),
    source: 'local',
    event: headers['x-marketplace-event'],
    headers,
    body: body.toString('utf8'),
    forward_to: targetUrl,
  })}\n`;
/** The JSON line listen journals for a forward's outcome (src/webhooks/listen/forwarder.ts). */
const outcome = (id, status, started) =>
  `${JSON.stringify({
    t: 'status',
    id,
    at: new Date().toISOString(),
    status: 'forwarded',
    attempts: 1,
    response_status: status,
    latency_ms: Math.round((performance.now() - started) * 10) / 10,
  })}\n`;

const server = http.createServer((req, res) => {
  const chunks = [];
  req
    .on('data', (c) => chunks.push(c))
    .on('end', () => {
      const body = Buffer.concat(chunks);
      const given = Buffer.from(String(req.headers['x-marketplace-signature']).slice(7), 'hex');
      const want = createHmac('sha256', SECRET).update(body).digest();
      if (given.length !== want.length || !timingSafeEqual(given, want)) return res.writeHead(401).end();
      const { host: _host, connection: _connection, ...headers } = req.headers;
      if (append) {
        const started = performance.now();
        const line =
          mode === 'records' ? Buffer.from(receipt(headers, body)) : Buffer.concat([body, NEWLINE]);
        return append(line).then(
          () => {
            res.writeHead(202).end();
            const fwd = http.request(targetUrl, { method: 'POST', agent, headers }, (r) => {
              r.resume();
              if (mode === 'records')
                r.on('end', () =>
                  append(Buffer.from(outcome(headers['x-marketplace-delivery'], r.statusCode, started))),
                );
            });
            fwd.on('error', () => {});
            fwd.end(body);
          },
          () => res.writeHead(503).end(),
        );
      }
      if (pool)
        return pool
          .request({ path: new URL(targetUrl).pathname, method: 'POST', headers, body })
          .then((r) => r.body.dump())
          .then(
            () => res.writeHead(202).end(),
            () => res.writeHead(502).end(),
          );
      const fwd = http.request(targetUrl, { method: 'POST', agent, headers }, (r) => {
        r.resume().on('end', () => res.writeHead(202).end());
      });
      fwd.on('error', () => res.writeHead(502).end());
      fwd.end(body);
    });
});
server.keepAliveTimeout = 30_000;
// Ends by itself when told (and so writes its profile under --cpu-prof).
process.on('SIGTERM', () => process.exit(0));
server.listen(0, '127.0.0.1', () => process.send({ url: `http://127.0.0.1:${server.address().port}/` }));

/**
 * The durable baselines' file: `append(line)` resolves once the line is on disk. Lines that arrive
 * while a write is in progress go out together in the next write (group commit).
 */
function groupCommit(path) {
  const fd = openSync(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_DSYNC,
    0o600,
  );
  let queue = [];
  let busy = false;
  const flush = () => {
    if (busy || queue.length === 0) return;
    busy = true;
    const batch = queue;
    queue = [];
    write(fd, Buffer.concat(batch.map(({ line }) => line)), (err) => {
      busy = false;
      for (const { resolve, reject } of batch) (err ? reject : resolve)(err);
      flush();
    });
  };
  return (line) =>
    new Promise((resolve, reject) => {
      queue.push({ line, resolve, reject });
      flush();
    });
}

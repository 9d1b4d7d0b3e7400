// The benches' HTTP client: keep-alive requests to a sandbox on 127.0.0.1, JSON in and out.
import { Agent, request } from 'node:http';

/**
 * `send` answers {status, headers, text, json}; `must` answers the JSON of an expected status, or
 * throws; `close` ends the kept-alive connections.
 */
export function httpClient(maxSockets = 64) {
  const agent = new Agent({ keepAlive: true, maxSockets });
  function send(port, method, path, headers = {}, body) {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const h = payload === undefined ? headers : { 'content-type': 'application/json', ...headers };
      const req = request({ host: '127.0.0.1', port, method, path, agent, headers: h }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const json = res.headers['content-type']?.includes('json') && text ? JSON.parse(text) : undefined;
          resolve({ status: res.statusCode, headers: res.headers, text, json });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });
  }
  async function must(promise, status) {
    const res = await promise;
    if (res.status !== status)
      throw new Error(`expected ${status}, got ${res.status}: ${res.text.slice(0, 300)}`);
    return res.json;
  }
  return { send, must, close: () => agent.destroy() };
}

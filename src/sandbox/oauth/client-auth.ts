import type { IncomingMessage } from 'node:http';
import type { SandboxCore } from '../kernel/core.js';
import { oauthError } from '../kernel/http/problem.js';
import { secretsEqual } from '../kernel/ids.js';
import type { AppRecord } from '../kernel/storage/records.js';

const basicChallenge = { 'www-authenticate': 'Basic realm="mkt-sandbox"' };

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw oauthError(401, 'invalid_client', 'Malformed Basic credentials.', basicChallenge);
  }
}

/** RFC 6749 section 2.3: client_secret in the body, or HTTP Basic (form-encoded id and secret). */
export function authenticateClient(
  core: SandboxCore,
  req: IncomingMessage,
  fields: Map<string, string>,
): AppRecord {
  const header = req.headers.authorization;
  let clientId = fields.get('client_id');
  let secret = fields.get('client_secret');
  let basic = false;
  if (header !== undefined) {
    const match = /^Basic +([A-Za-z0-9+/=]+)$/i.exec(header);
    if (!match) throw oauthError(401, 'invalid_client', 'Unsupported Authorization header.', basicChallenge);
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw oauthError(401, 'invalid_client', 'Malformed Basic credentials.', basicChallenge);
    if (secret !== undefined) {
      throw oauthError(400, 'invalid_request', 'Use one client authentication method, not both.');
    }
    const headerId = safeDecode(decoded.slice(0, colon));
    if (clientId !== undefined && clientId !== headerId) {
      throw oauthError(
        400,
        'invalid_request',
        'The client_id in the body differs from the Basic credentials.',
      );
    }
    clientId = headerId;
    secret = safeDecode(decoded.slice(colon + 1));
    basic = true;
  }
  if (clientId === undefined)
    throw oauthError(400, 'invalid_request', 'The parameter "client_id" is missing.');
  if (secret === undefined) throw oauthError(401, 'invalid_client', 'The client_secret is missing.');
  const app = core.ledger.appByClientId(clientId);
  if (!app || !secretsEqual(app.client_secret, secret)) {
    throw oauthError(401, 'invalid_client', 'Client authentication failed.', basic ? basicChallenge : {});
  }
  return app;
}

import type { Deps } from '../deps.js';
import { CheckFailedError } from '../errors.js';

/** What `mkt webhooks verify` checks: raw bytes, the signature header, the secret's variable. */
export interface VerifyInput {
  body: Buffer;
  signature: string;
  /** --app: whose stored secret to use when no variable gives one. */
  app?: string;
  secretEnv?: string;
  /** Accepted timestamp age in seconds; 0: not checked. */
  toleranceSeconds: number;
}

/** Checks a payload against its signature; throws a CheckFailedError naming the likely reason. */
export async function verifyPayload(
  deps: Pick<
    Deps,
    'env' | 'credentials' | 'profile' | 'api' | 'config' | 'session' | 'clock' | 'out' | 'json'
  >,
  input: VerifyInput,
): Promise<{ valid: true; event: string; timestamp: string; age_seconds: number }> {
  const { resolveWebhookSecret } = await import('./secret.js');
  const { SIGNATURE_PATTERN, checkDelivery, diagnoseMismatch } = await import('./signature.js');
  const { secret, source } = await resolveWebhookSecret(deps, {
    app: input.app,
    secretEnv: input.secretEnv,
    fetch: false,
  });
  if (!deps.json) deps.out.info(`Verifying with the signing secret from ${source}.`);
  const body = input.body;
  const signature = input.signature.trim();
  if (!SIGNATURE_PATTERN.test(signature)) {
    throw new CheckFailedError(
      'malformed_signature',
      `The signature "${signature.slice(0, 80)}" is not "sha256=" followed by 64 hex digits.`,
      { hints: ['copy the whole X-Marketplace-Signature header value, e.g. sha256=3f5a…'] },
    );
  }
  const check = checkDelivery({
    secret,
    body,
    signature,
    now: deps.clock.now(),
    toleranceSeconds: input.toleranceSeconds > 0 ? input.toleranceSeconds : undefined,
  });
  if (!check.ok) {
    if (check.reason === 'bad_signature') {
      if (diagnoseMismatch(secret, body.toString('utf8'), signature) === 'reserialized') {
        throw new CheckFailedError(
          'reserialized_body',
          'The signature does not match these bytes, but it matches the same JSON serialized differently: the body was re-serialized (whitespace or key order changed) before verifying.',
          { hints: ['verify the raw request body bytes, before any JSON parsing (e.g. express.raw())'] },
        );
      }
      throw new CheckFailedError(
        'wrong_secret',
        'The signature does not match: the secret is most likely not the one this delivery was signed with.',
        {
          hints: [
            'mkt apps get APP_ID   (check which app sent it)',
            `mkt webhooks listen${input.app ? ` --app ${input.app}` : ''} --print-secret`,
          ],
        },
      );
    }
    if (check.reason === 'stale_timestamp') {
      throw new CheckFailedError(
        'stale_timestamp',
        `The signature is valid, but ${sentencePart(check.message)}`,
        {
          hints: [
            'mkt trigger EVENT   (a fresh delivery)',
            `mkt webhooks verify … --tolerance SECONDS   (accept older deliveries)`,
            "timedatectl set-ntp true   (if this machine's clock is off)",
          ],
        },
      );
    }
    throw new CheckFailedError(check.reason, `The signature is valid, but ${sentencePart(check.message)}`);
  }
  return {
    valid: true,
    event: check.envelope.event,
    timestamp: check.envelope.timestamp,
    age_seconds: check.ageSeconds,
  };
}

/** A sentence of its own made the second half of one ("The timestamp …" → "the timestamp …"). */
function sentencePart(sentence: string): string {
  return /^[A-Z][a-z]/.test(sentence) ? sentence[0]!.toLowerCase() + sentence.slice(1) : sentence;
}

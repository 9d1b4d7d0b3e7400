import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { CheckFailedError, UsageError } from '../../errors.js';

export default class WebhooksVerify extends BaseCommand<typeof WebhooksVerify> {
  static summary = 'Check a webhook payload against its signature, and say why it fails.';
  static description = `Exit 0 when the signature is valid and the timestamp within --tolerance; exit 3 with the most
likely reason otherwise: wrong secret, a re-serialized body (whitespace or key order changed), an old
timestamp, or a malformed signature header. The secret comes from --secret-env NAME or $MKT_WEBHOOK_SECRET.`;
  static examples = [
    'MKT_WEBHOOK_SECRET=whsec_… <%= config.bin %> webhooks verify --signature sha256=5d41… --payload body.json',
    'cat body.json | <%= config.bin %> webhooks verify --secret-env MY_SECRET --signature "$SIG" --payload -',
  ];
  static enableJsonFlag = true;
  static flags = {
    signature: Flags.string({ description: 'the X-Marketplace-Signature value (sha256=…)', required: true }),
    payload: Flags.string({ description: 'file with the raw body, or - for stdin', required: true }),
    'secret-env': Flags.string({
      description: 'name of the environment variable holding the signing secret',
    }),
    tolerance: Flags.integer({
      description: 'accepted timestamp age in seconds (0: do not check)',
      default: 300,
      min: 0,
    }),
  };

  async run() {
    const deps = await this.deps();
    const f = this.flags;
    const { resolveWebhookSecret } = await import('../../webhooks/secret.js');
    const { SIGNATURE_PATTERN, checkDelivery, diagnoseMismatch } =
      await import('../../webhooks/signature.js');
    const { secret } = await resolveWebhookSecret(deps, { secretEnv: f['secret-env'], fetch: false });
    let body: Buffer;
    try {
      if (f.payload === '-') {
        const chunks: Buffer[] = [];
        for await (const c of deps.stdin) chunks.push(Buffer.from(c as Buffer));
        body = Buffer.concat(chunks);
      } else body = await (await import('node:fs/promises')).readFile(f.payload);
    } catch (err) {
      throw new UsageError(`Cannot read --payload ${f.payload}: ${(err as Error).message}`);
    }
    const signature = f.signature.trim();
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
      toleranceSeconds: f.tolerance > 0 ? f.tolerance : undefined,
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
            hints: ['mkt apps get APP_ID   (check which app sent it)', 'mkt webhooks listen --print-secret'],
          },
        );
      }
      if (check.reason === 'stale_timestamp') {
        throw new CheckFailedError('stale_timestamp', `The signature is valid, but ${check.message}`, {
          hints: [`mkt webhooks verify … --tolerance SECONDS`, 'mkt trigger EVENT   (a fresh delivery)'],
        });
      }
      throw new CheckFailedError(check.reason, `The signature is valid, but ${check.message}`);
    }
    const result = {
      valid: true,
      event: check.envelope.event,
      timestamp: check.envelope.timestamp,
      age_seconds: check.ageSeconds,
    };
    if (!deps.json)
      deps.out.success(
        `Valid signature: ${check.envelope.event} of ${check.envelope.timestamp} (${check.ageSeconds} s old).`,
      );
    return result;
  }
}

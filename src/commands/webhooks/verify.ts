import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { UsageError } from '../../errors.js';
import { flags } from '../../flags.js';
import { humanDuration } from '../../output/duration.js';

export default class WebhooksVerify extends BaseCommand<typeof WebhooksVerify> {
  static summary = 'Check a webhook payload against its signature, and say why it fails.';
  static description = `Exit 0 when the signature is valid and the timestamp within --tolerance; exit 3 with the most
likely reason otherwise: wrong secret, a re-serialized body (whitespace or key order changed), an old
timestamp, or a malformed signature header. The secret comes from --secret-env NAME, else
$MKT_WEBHOOK_SECRET, else the one stored for the app (by \`mkt apps rotate-secret --kind webhook\` or
\`mkt webhooks listen\`; the app is --app, else the API key's own app, else the profile's default app).
Where it came from is said on stderr.`;
  static examples = [
    'MKT_WEBHOOK_SECRET=whsec_… <%= config.bin %> webhooks verify --signature sha256=5d41… --payload body.json',
    '<%= config.bin %> webhooks verify --app app_123 --signature "$SIG" --payload body.json',
    'cat body.json | <%= config.bin %> webhooks verify --secret-env MY_SECRET --signature "$SIG" --payload -',
  ];
  static enableJsonFlag = true;
  static flags = {
    app: flags.app(),
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
    const { verifyPayload } = await import('../../webhooks/verify.js');
    const result = await verifyPayload(deps, {
      body,
      signature: f.signature,
      app: f.app,
      secretEnv: f['secret-env'],
      toleranceSeconds: f.tolerance,
    });
    if (!deps.json)
      deps.out.success(
        `Valid signature: ${result.event} of ${result.timestamp} (${humanDuration(result.age_seconds)} old).`,
      );
    return result;
  }
}

import { describe, expect, it } from 'vitest';
import { signContextToken } from '../../src/wire/context-token.js';
import { runMkt } from '../support/cli.js';
import { useSandbox, type SandboxContext } from '../support/sandbox.js';
import { claimsFor, joseToken, nowS, unsignedToken } from './helpers.js';

/** Signs and verifies against the sandbox of `ctx` with the seeded app's secret. */
function verifier(ctx: SandboxContext) {
  const secret = () => ctx.sandbox.seed.app.client_secret;
  const ours = (nowSeconds = nowS()) =>
    signContextToken(
      secret(),
      {
        iss: ctx.sandbox.siteUrl,
        aud: ctx.sandbox.seed.app.client_id,
        sub: ctx.sandbox.seed.users[0]!.id,
        app_id: ctx.sandbox.seed.app.id,
      },
      nowSeconds,
    );
  /** Runs the command with the seeded app's secret in MKT_CLIENT_SECRET (changed by `env`), `input` on stdin. */
  const verify = (args: string[], env: Record<string, string | undefined> = {}, input?: string) =>
    runMkt(['apps', 'verify-context-token', ...args], ctx.dir, {
      env: { ...ctx.env, MKT_CLIENT_SECRET: secret(), ...env },
      input,
    });
  /** The JSON document of a failed check, with its exit code 3 and the reason on stderr. */
  async function refused(args: string[], env: Record<string, string | undefined> = {}) {
    const res = await verify([...args, '--json'], env);
    expect(res.code, res.stderr).toBe(3);
    const doc = JSON.parse(res.stdout) as {
      valid: boolean;
      reason: string;
      message: string;
      seconds?: number;
    };
    expect(doc.valid).toBe(false);
    expect(res.stderr).toContain(doc.message);
    return doc;
  }

  return { secret, ours, verify, refused };
}

describe('mkt apps verify-context-token', () => {
  const ctx = useSandbox({ dirPerTest: true });
  const { secret, ours, verify, refused } = verifier(ctx);

  it('exits 0 with the claims of a token the marketplace signed (argument, --json)', async () => {
    const res = await verify([ours(), '--json']);
    expect(res.code, res.stderr).toBe(0);
    const doc = JSON.parse(res.stdout);
    expect(doc).toMatchObject({
      valid: true,
      secret_source: '$MKT_CLIENT_SECRET',
      claims: {
        iss: ctx.sandbox.siteUrl,
        aud: ctx.sandbox.seed.app.client_id,
        sub: ctx.sandbox.seed.users[0]!.id,
        app_id: ctx.sandbox.seed.app.id,
      },
    });
    expect(doc.expires_in_s).toBeGreaterThan(250);
  });

  it('reads the token, or the framed page URL carrying it, from stdin and shows the claims', async () => {
    const res = await verify([], {}, `${ours()}\n`);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`user \\(sub\\):\\s+${ctx.sandbox.seed.users[0]!.id}`));
    expect(res.stderr).toMatch(/Valid context token .*expires in [45] min/);
    const framed = `https://embed.example/app?user_id=x&context_token=${ours()}`;
    expect((await verify([], {}, framed)).code).toBe(0);
  });

  it('a signature no known secret verifies: another secret or altered, said as both', async () => {
    const other = await refused([await joseToken('cs_someone_else', claimsFor(ctx.sandbox))]);
    expect(other.reason).toBe('wrong_secret_or_altered');
    expect(other.message).toMatch(/signed with another secret .* or changed after signing/);
    const [header, , signature] = ours().split('.');
    const forged = Buffer.from(JSON.stringify(claimsFor(ctx.sandbox, { sub: 'usr_admin' }))).toString(
      'base64url',
    );
    expect((await refused([`${header}.${forged}.${signature}`])).reason).toBe('wrong_secret_or_altered');
  });

  it('a signature cut short is altered', async () => {
    const doc = await refused([ours().slice(0, -6)]);
    expect(doc.reason).toBe('altered');
    expect(doc.message).toMatch(/signature is 27 bytes where HS256 makes 32/);
  });

  it('says by how much a token has expired, and how long until one is valid', async () => {
    const expired = await refused([ours(nowS() - 300 - 100)]);
    expect(expired.reason).toBe('expired');
    expect(expired.seconds).toBeGreaterThanOrEqual(100);
    expect(expired.message).toMatch(/^The token expired 1 min 4\d s ago \(exp \d{4}-/);
    const human = await verify([ours(nowS() - 300 - 100)]);
    expect(human.stderr).toContain(`Try: mkt apps preview --user ${ctx.sandbox.seed.users[0]!.id}`);
    const early = await refused([ours(nowS() + 600)]);
    expect(early.reason).toBe('not_yet_valid');
    expect(early.message).toMatch(/not valid for another (9|10) min/);
    expect((await verify([ours(nowS() - 300 - 100), '--tolerance', '200'])).code).toBe(0);
  });

  it('a token for another app or site is refused by aud or iss', async () => {
    const aud = await refused([await joseToken(secret(), claimsFor(ctx.sandbox, { aud: 'cli_other' }))]);
    expect(aud).toMatchObject({ reason: 'wrong_audience' });
    expect(aud.message).toContain(`made for client "cli_other", not for "${ctx.sandbox.seed.app.client_id}"`);
    const unproven = await refused([
      await joseToken('cs_other', claimsFor(ctx.sandbox, { aud: 'cli_other' })),
    ]);
    expect(unproven.message).toMatch(/most likely another app's token/);
    const iss = await refused([
      await joseToken(secret(), claimsFor(ctx.sandbox, { iss: 'https://market.example' })),
    ]);
    expect(iss).toMatchObject({ reason: 'wrong_issuer' });
    expect(iss.message).toContain('issued by "https://market.example"');
  });

  it('refuses what is not a JWT: one word, a two-part token, a URL-encoded one', async () => {
    expect((await refused(['hello'])).reason).toBe('not_a_jwt');
    const [payload, mac] = ours().split('.').slice(1);
    expect((await refused([`${payload}.${mac}`])).message).toMatch(/2 part\(s\); a signed JWT has three/);
    expect((await refused([ours().replaceAll('.', '%2E')])).message).toMatch(/URL-encoded/);
  });

  it('refuses "alg": "none", another algorithm and missing claims', async () => {
    const none = await refused([unsignedToken(claimsFor(ctx.sandbox))]);
    expect(none).toMatchObject({ reason: 'wrong_algorithm' });
    expect(none.message).toMatch(/unsigned \("alg": "none"\)/);
    const hs512 = await refused([await joseToken(secret(), claimsFor(ctx.sandbox), 'HS512')]);
    expect(hs512.message).toContain('"alg": "HS512"');
    const noSub = await refused([await joseToken(secret(), claimsFor(ctx.sandbox, { sub: undefined }))]);
    expect(noSub).toMatchObject({ reason: 'invalid_claims' });
  });

  it('shows control characters from a token escaped, never raw on the terminal', async () => {
    const token = await joseToken(
      secret(),
      claimsFor(ctx.sandbox, { sub: 'usr_\u001b[2Jx', jti: 'a\u009bb' }),
    );
    const res = await verify([token]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.includes('\u001b') || res.stdout.includes('\u009b')).toBe(false);
    expect(res.stdout).toContain('usr_\\u001b[2Jx');
  });

  it('without a secret, or with a flag that would put one in argv, it is a usage error', async () => {
    const res = await verify([ours(), '--client-id', ctx.sandbox.seed.app.client_id], {
      MKT_CLIENT_SECRET: undefined,
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/No client secret for client .*MKT_CLIENT_SECRET/);
    expect((await verify([ours(), '--secret', 'x'])).code).toBe(2);
  });
});

describe('mkt apps verify-context-token with the secret in the credential store', () => {
  const ctx = useSandbox();
  const { secret, verify, refused } = verifier(ctx);

  it('accepts a token made by jose, checked with the secret from the credential store', async () => {
    const token = await joseToken(secret(), claimsFor(ctx.sandbox));
    expect((await verify([token], { MKT_CLIENT_SECRET: undefined })).code).toBe(2); // nothing stored yet
    const rotated = await ctx.mkt(['apps', 'rotate-secret', '--kind', 'client', '--yes', '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    const fresh = JSON.parse(rotated.stdout).client_secret as string;
    const res = await verify([await joseToken(fresh, claimsFor(ctx.sandbox)), '--json'], {
      MKT_CLIENT_SECRET: undefined,
    });
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).secret_source).toBe('the credential store');
    // MKT_CLIENT_SECRET left at the old secret: the stored one proves it is the wrong one.
    const doc = await refused([await joseToken(fresh, claimsFor(ctx.sandbox))], {
      MKT_CLIENT_SECRET: secret(),
    });
    expect(doc.reason).toBe('wrong_secret');
    expect(doc.message).toMatch(/MKT_CLIENT_SECRET is not the secret .* stored client secret/);
  });
});

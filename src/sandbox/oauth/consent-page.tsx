import { Layout } from '../kernel/http/layout.js';
import type { AppRecord, SubscriptionRecord, UserRecord } from '../kernel/storage/records.js';

/** What each scope lets the application do, in the person's words (docs/DECISIONS.md §2). */
const SCOPE_MEANINGS: Record<string, string> = {
  'identity:read': 'see your name, e-mail address and avatar',
  'entitlements:read': 'see your plan, its status, features and usage',
  'apps:write': 'manage your applications, pricing plans, keys and test events',
};

/** One person who may sign in: the app's developer, or a test user with their subscription. */
export interface ConsentUser {
  user: UserRecord;
  role: 'developer' | 'test user';
  subscription?: SubscriptionRecord;
}

function label(u: ConsentUser, app: AppRecord): string {
  const who = `${u.user.name} <${u.user.email}>`;
  if (u.role === 'developer') return `${who} — developer, owner of ${app.name}`;
  const sub = u.subscription;
  return `${who} — test user${sub ? `, ${sub.plan}, ${sub.status}` : ''}`;
}

/**
 * The consent page of `GET /oauth/authorize`: who asks for what, who may sign in (the developer
 * marked as such and preselected when `apps:write` is asked for), and a form that carries only the
 * stored request's id and its anti-CSRF token. Every value is escaped by the JSX renderer.
 */
export function consentPage(input: {
  app: AppRecord;
  scopes: string[];
  users: ConsentUser[];
  selected: string | undefined;
  hidden: Record<string, string>;
  /** Where the form goes (default: the authorization endpoint). */
  action?: string;
  /** The device sign-in's user code, shown for the person to compare with their device. */
  userCode?: string;
}) {
  return (
    <Layout title={`Authorize ${input.app.name}`}>
      <h1>
        Authorize <span id="app-name">{input.app.name}</span>
      </h1>
      {input.userCode ? (
        <p>
          A device asks to sign in with the code <strong id="user-code">{input.userCode}</strong>. Approve
          only if your device shows this same code and you started this sign-in yourself.
        </p>
      ) : (
        ''
      )}
      <p>The application asks for these permissions:</p>
      <ul id="scopes">
        {input.scopes.map((s) => (
          <li>
            <code>{s}</code>
            {SCOPE_MEANINGS[s] ? ` — ${SCOPE_MEANINGS[s]}` : ''}
          </li>
        ))}
      </ul>
      <form method="post" action={input.action ?? '/oauth/authorize'}>
        {Object.entries(input.hidden).map(([k, v]) => (
          <input type="hidden" name={k} value={v} />
        ))}
        <p>
          <label>
            Sign in as{' '}
            <select name="user_id" id="user_id">
              {input.users.map((u) => (
                <option
                  value={u.user.id}
                  data-role={u.role === 'developer' ? 'developer' : 'test-user'}
                  selected={u.user.id === input.selected}
                >
                  {label(u, input.app)}
                </option>
              ))}
            </select>
          </label>
        </p>
        <p>
          <button type="submit" name="decision" value="approve">
            Approve
          </button>
          <button type="submit" name="decision" value="deny">
            Deny
          </button>
        </p>
      </form>
      <p>
        <small>This is the mkt sandbox: no real users are affected.</small>
      </p>
    </Layout>
  );
}

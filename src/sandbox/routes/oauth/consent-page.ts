import { escapeHtml, layout } from '../../http/html.js';
import type { AppRecord, SubscriptionRecord, UserRecord } from '../../storage/records.js';

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
 * stored request's id and its anti-CSRF token.
 */
export function consentPage(input: {
  app: AppRecord;
  scopes: string[];
  users: ConsentUser[];
  selected: string | undefined;
  hidden: Record<string, string>;
}): string {
  const scopes = input.scopes
    .map((s) => {
      const meaning = SCOPE_MEANINGS[s];
      return `<li><code>${escapeHtml(s)}</code>${meaning ? ` — ${meaning}` : ''}</li>`;
    })
    .join('\n');
  const options = input.users
    .map((u) => {
      const selected = u.user.id === input.selected ? ' selected' : '';
      const role = u.role === 'developer' ? 'developer' : 'test-user';
      return `<option value="${escapeHtml(u.user.id)}" data-role="${role}"${selected}>${escapeHtml(label(u, input.app))}</option>`;
    })
    .join('\n');
  const hidden = Object.entries(input.hidden)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('\n');
  return layout(
    `Authorize ${input.app.name}`,
    `<h1>Authorize <span id="app-name">${escapeHtml(input.app.name)}</span></h1>
<p>The application asks for these permissions:</p>
<ul id="scopes">
${scopes}
</ul>
<form method="post" action="/oauth/authorize">
${hidden}
<p><label>Sign in as <select name="user_id" id="user_id">
${options}
</select></label></p>
<p><button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button></p>
</form>
<p><small>This is the mkt sandbox: no real users are affected.</small></p>`,
  );
}

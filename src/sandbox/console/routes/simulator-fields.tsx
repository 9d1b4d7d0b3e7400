import type { FC } from 'hono/jsx';
import type { ConsoleRequest } from '../request.js';
import type { PlanView } from './plans.js';

// The simulator tab's pieces: the test users it lists, the choices its forms offer.

/** A test user as the simulator shows it. */
export interface TestUserView {
  id: string;
  email?: string;
  name?: string;
  plan?: string;
  status?: string;
  expires_at?: string | null;
  payment_behaviour?: string;
  usage?: { api_calls: number; limit: number };
}

/** The app's test users (none when the sandbox cannot list them). */
export function testUsers(r: ConsoleRequest, appId: string): Promise<TestUserView[]> {
  return r.api.list<TestUserView>(`/simulator/users?app_id=${encodeURIComponent(appId)}&limit=100`);
}

export const PAYMENT_BEHAVIOURS = ['succeeds', 'declines', 'declines_renewals'];
export const STATUSES = ['active', 'trialing', 'past_due', 'cancelled', 'expired'];
export const ADVANCES: Array<[string, string]> = [
  ['3600', '1 hour'],
  ['86400', '1 day'],
  ['604800', '7 days'],
  ['2678400', '31 days'],
  ['31536000', '365 days'],
];

export const UserSelect: FC<{ users: TestUserView[]; name?: string }> = ({ users, name = 'user_id' }) =>
  users.length ? (
    <select name={name}>
      {users.map((u) => (
        <option value={u.id}>
          {u.name ?? u.email ?? u.id} ({u.id})
        </option>
      ))}
    </select>
  ) : (
    <input name={name} placeholder="usr_…" required />
  );

export const PlanSelect: FC<{ plans: PlanView[]; name?: string; any?: boolean }> = ({
  plans,
  name = 'plan',
  any,
}) => (
  <select name={name}>
    {any ? <option value="">(as the event needs)</option> : null}
    {plans
      .filter((p) => !p.archived)
      .map((p) => (
        <option value={p.id}>{p.id}</option>
      ))}
  </select>
);

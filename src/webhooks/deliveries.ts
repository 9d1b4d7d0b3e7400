import type { Deps } from '../deps.js';
import type { DeliveryStatus, DeliverySummary } from './journal.js';

/** Which journaled deliveries `mkt webhooks deliveries` lists. */
export interface DeliveriesInput {
  appId: string | undefined;
  event?: string;
  status?: DeliveryStatus;
  limit: number;
}

/** The newest `limit` deliveries of the app's journal that match, oldest first, and the journal folder. */
export async function journaledDeliveries(
  deps: Pick<Deps, 'env'>,
  input: DeliveriesInput,
): Promise<{ dir: string; rows: DeliverySummary[] }> {
  const { journalDir, readJournal, summarize } = await import('./journal.js');
  const { dataDir } = await import('../platform/paths.js');
  const { redactUrl } = await import('../api/redact.js');
  const dir = journalDir(dataDir(deps.env), input.appId);
  const rows = summarize(await readJournal(dir))
    .filter((d) => !input.event || d.event === input.event)
    .filter((d) => !input.status || d.status === input.status)
    .slice(-input.limit)
    .map((d) => (d.forward_to ? { ...d, forward_to: redactUrl(d.forward_to) } : d));
  return { dir, rows };
}

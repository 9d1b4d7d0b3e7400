import type { Deps } from '../deps.js';
import type { App } from './apps.js';

/** Prints one app as label: value lines on stdout (the client secret too, when the answer has one). */
export function showApp(deps: Pick<Deps, 'out'>, app: App): void {
  const pairs: Array<[string, unknown]> = [
    ['id', app.id],
    ['name', app.name],
    ['client id', app.client_id],
    ['redirect uris', app.redirect_uris],
    ['webhook url', app.webhook_url],
    ['embed url', app.embed_url],
    ['created', app.created_at],
  ];
  if (app.client_secret) pairs.push(['client secret', app.client_secret]);
  deps.out.fields(pairs);
}

import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../base-command.js';
import { UsageError } from '../errors.js';
import { flags } from '../flags.js';
import { EVENT_NAMES, buildEventData, checkEventName, triggerEvent } from '../simulator/events.js';

export default class Trigger extends BaseCommand<typeof Trigger> {
  static summary = 'Send a test webhook event through the Integration Simulator.';
  static description = `Events: ${EVENT_NAMES.join(', ')}.
The marketplace signs it and delivers it to the app's webhook URL and to every \`mkt webhooks listen\`.
Fields left out get defaults (the app's first test user, the user's plan, now). Test mode only.`;
  static examples = [
    '<%= config.bin %> trigger subscription.created',
    '<%= config.bin %> trigger subscription.created --user usr_123 --plan pro-monthly',
    '<%= config.bin %> trigger user.authorized --set data.scopes=identity:read,entitlements:read',
    '<%= config.bin %> trigger subscription.cancelled --dry-run',
  ];
  static enableJsonFlag = true;
  static args = { event: Args.string({ description: `event to send: ${EVENT_NAMES.join(', ')}` }) };
  static flags = {
    app: flags.app(),
    user: Flags.string({ description: 'data.user_id (usr_…)' }),
    plan: Flags.string({ description: 'data.plan (subscription events)' }),
    set: Flags.string({
      description: 'a data field, data.key=value (repeatable; lists as a,b)',
      multiple: true,
    }),
    'data-file': Flags.string({ description: 'JSON file with the event data (or - for stdin)' }),
    'dry-run': Flags.boolean({ description: 'print the envelope that would be sent, send nothing' }),
  };

  async run() {
    const event = checkEventName(this.args.event);
    const f = this.flags;
    let file: unknown;
    if (f['data-file']) {
      const { readInput } = await import('../platform/input.js');
      const text = await readInput({ stdin: process.stdin }, f['data-file']);
      try {
        file = JSON.parse(text);
      } catch (err) {
        throw new UsageError(`--data-file ${f['data-file']} is not JSON: ${(err as Error).message}`);
      }
    }
    const data = buildEventData(event, { file, sets: f.set, user: f.user, plan: f.plan });
    const deps = await this.deps();
    const result = await triggerEvent(deps, { app: f.app, event, data, dryRun: f['dry-run'] });
    if ('dry_run' in result) {
      if (!deps.json) {
        deps.out.json(result.envelope);
        if (result.envelope.data.user_id === undefined)
          deps.out.info(deps.out.dim("data.user_id is left to the marketplace: the app's first test user."));
        deps.out.info(deps.out.dim('Dry run: nothing was sent.'));
      }
      return result;
    }
    if (!deps.json) {
      deps.out.data(result.delivery_id);
      const w = result.webhook;
      const hook =
        w.status === 'delivered'
          ? `delivered to ${w.url} (${w.response_status})`
          : w.status === 'no_url'
            ? 'no URL set (mkt apps update --webhook-url URL)'
            : `failed at ${w.url}: ${w.error ?? w.response_status}; the marketplace retries`;
      const out = deps.out;
      (w.status === 'failed' ? out.warn.bind(out) : out.success.bind(out))(
        `Sent ${event} (${result.delivery_id}); webhook: ${hook}`,
      );
      out.info(
        `  relay listeners: ${result.listeners}${result.listeners === 0 ? ' (start one with mkt webhooks listen)' : ''}`,
      );
      out.info(out.dim(`  data: ${JSON.stringify(result.envelope?.data ?? {})}`));
    }
    return result;
  }
}

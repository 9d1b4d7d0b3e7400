import { Flags } from '@oclif/core';
import { BaseCommand } from '../base-command.js';
import { UsageError } from '../errors.js';
import { arg, flags } from '../flags.js';
import { EVENT_NAMES, buildEventData, checkEventName, triggerEvent } from '../simulator/events.js';

export default class Trigger extends BaseCommand<typeof Trigger> {
  static summary = 'Make an event happen through the Integration Simulator, and send it.';
  static description = `Events: ${EVENT_NAMES.join(', ')}.
The marketplace performs the transition the event names (subscribe or change plan, cancel, authorize,
revoke), then signs the event and delivers it to the app's webhook URL and to every \`mkt webhooks listen\`;
data that contradicts the state is refused with what to do. --synthetic sends the payload as given and
changes nothing (the delivery is marked X-Marketplace-Simulated: synthetic). Test mode only.`;
  static examples = [
    '<%= config.bin %> trigger subscription.created',
    '<%= config.bin %> trigger subscription.created --user usr_123 --plan pro-monthly',
    '<%= config.bin %> trigger user.authorized --set data.scopes=identity:read,entitlements:read',
    '<%= config.bin %> trigger subscription.cancelled --user usr_123',
    '<%= config.bin %> trigger subscription.cancelled --synthetic --set data.plan=legacy-plan',
  ];
  static enableJsonFlag = true;
  static args = { event: arg({ description: `event to send: ${EVENT_NAMES.join(', ')}` }) };
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
    synthetic: Flags.boolean({ description: 'send the data as given without changing any state' }),
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
    const result = await triggerEvent(deps, {
      app: f.app,
      event,
      data,
      dryRun: f['dry-run'],
      synthetic: f.synthetic,
    });
    if ('dry_run' in result) {
      if (!deps.json) {
        await deps.out.json(result.envelope);
        if (result.user_left_out === 'new_test_user')
          deps.out.info(
            deps.out.dim('data.user_id: a new test user, whom the marketplace creates and subscribes.'),
          );
        else if (result.user_left_out === 'marketplace')
          deps.out.info(
            deps.out.dim('data.user_id is left to the marketplace (it lists no test users here).'),
          );
        deps.out.info(deps.out.dim('Dry run: nothing was sent.'));
      }
      return result;
    }
    if (!deps.json) {
      const out = deps.out;
      out.data(result.delivery_id);
      // Each way the event went, told apart: the relay (listen) and the app's webhook URL.
      const n = result.listeners;
      out.success(
        `Sent ${event} (${result.delivery_id})${n > 0 ? ` to ${n} relay listener${n === 1 ? '' : 's'} (mkt webhooks listen)` : ''}.`,
      );
      const w = result.webhook;
      if (w.status === 'delivered')
        out.success(`Delivered to the app's webhook URL ${w.url} (${w.response_status}).`);
      else if (w.status === 'failed')
        out.warn(
          `The app's webhook URL ${w.url} did not take it (${w.error ?? w.response_status}); the marketplace retries it there.`,
        );
      else if (n === 0)
        out.info(
          'No listener and no webhook URL: start mkt webhooks listen, or set mkt apps update --webhook-url URL.',
        );
      out.info(out.dim(`  data: ${JSON.stringify(result.envelope?.data ?? {})}`));
    }
    return result;
  }
}

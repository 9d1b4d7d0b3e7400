import { BaseCommand } from '../../base-command.js';

export default class SimulatorClock extends BaseCommand<typeof SimulatorClock> {
  static summary = "Show the marketplace's business time (subscriptions, trials, renewals follow it).";
  static description =
    'Business time is the real time plus an offset that only moves forward (mkt simulator clock advance). Tokens, signatures and envelope timestamps always use the real time.';
  static examples = [
    '<%= config.bin %> simulator clock',
    '<%= config.bin %> simulator clock --json',
    '<%= config.bin %> simulator clock advance 31d',
  ];
  static enableJsonFlag = true;

  async run() {
    const deps = await this.deps();
    const { showClock } = await import('../../simulator/clock.js');
    const { humanDuration } = await import('../../output/duration.js');
    const clock = await showClock(deps);
    if (!deps.json) {
      deps.out.fields([
        ['Business time', clock.now],
        ['Ahead of real time', humanDuration(clock.offset_s)],
      ]);
    }
    return clock;
  }
}

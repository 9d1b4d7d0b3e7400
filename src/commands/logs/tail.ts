import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { flags } from '../../flags.js';

export default class LogsTail extends BaseCommand<typeof LogsTail> {
  static summary = "Stream the app's API requests as the marketplace answers them.";
  static description = `One line per request: time, status, method, path, latency, credential (kind:id), user, request id (req_…) and error code. The marketplace logs requests made with the app's keys and its users' tokens; never a secret, a token or a body. A dropped connection is resumed without losing lines the marketplace still keeps. The request id is the one in the X-Request-Id header and in mkt's own error messages.`;
  static examples = [
    '<%= config.bin %> logs tail',
    '<%= config.bin %> logs tail --status 4xx,5xx --path /apps',
    "<%= config.bin %> logs tail --jq 'select(.latency_ms > 100)'",
  ];
  static enableJsonFlag = true;
  static flags = {
    app: flags.app(),
    status: Flags.string({
      description: 'only these statuses: a code (404), a class (4xx) or a list (4xx,500)',
    }),
    path: Flags.string({
      description: 'only this path and those below it, or a pattern with * (/apps/*/plans)',
    }),
  };

  async run() {
    // Ctrl-C and SIGTERM are taken before anything is announced.
    const signal = this.signal;
    const deps = await this.deps();
    const { tailLogs } = await import('../../logs/tail.js');
    const { tailRenderer } = await import('../../logs/render.js');
    await tailLogs(deps, {
      app: this.flags.app,
      status: this.flags.status,
      path: this.flags.path,
      signal,
      emit: tailRenderer(deps.out, { json: deps.json }),
      backlog: () => deps.out.backlog(),
    });
    throw signal.reason;
  }
}

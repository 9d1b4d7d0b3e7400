import { Command, Flags, type Interfaces } from '@oclif/core';
import { createDeps, type Deps } from './deps.js';
import { CheckFailedError, InterruptedError, MktError, TerminatedError, UsageError } from './errors.js';
import type { JqFilter } from './output/jq.js';
import { jsonText } from './output/output.js';
import { argumentGivenAsFlag, parseErrorMessage } from './output/parse-error.js';
import { reportError } from './output/report.js';
import { updateNotice } from './update/notice.js';

export type CommandFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof BaseCommand)['baseFlags'] & T['flags']
>;
export type CommandArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>;

const GLOBAL_FLAGS = {
  profile: Flags.string({
    description: 'profile to use (default: $MKT_PROFILE or "default")',
    helpGroup: 'GLOBAL',
  }),
  'site-url': Flags.string({
    description: 'marketplace root address (default: $MKT_SITE_URL, the profile, or the local sandbox)',
    helpGroup: 'GLOBAL',
  }),
  verbose: Flags.boolean({
    description: 'log each HTTP request and response to stderr, secrets redacted',
    helpGroup: 'GLOBAL',
  }),
};

const JSON_FLAG = Flags.boolean({
  description: 'print the result as JSON on stdout (errors too)',
  helpGroup: 'GLOBAL',
});

const JQ_FLAG = Flags.string({
  description:
    'filter the JSON result with a jq expression (implies --json; strings print raw, one value a line)',
  helpGroup: 'GLOBAL',
  helpValue: 'EXPR',
});

/**
 * Every mkt command: parses the global flags, builds the dependency object once, and is the only
 * place that turns errors into output and exit codes.
 */
export abstract class BaseCommand<T extends typeof Command> extends Command {
  /** The global flags, and --json and --jq where the command returns data (one wording for every command). */
  static override get baseFlags(): typeof GLOBAL_FLAGS & { json?: typeof JSON_FLAG; jq?: typeof JQ_FLAG } {
    return this.enableJsonFlag ? { json: JSON_FLAG, jq: JQ_FLAG, ...GLOBAL_FLAGS } : GLOBAL_FLAGS;
  }

  protected flags!: CommandFlags<T>;
  protected args!: CommandArgs<T>;
  private builtDeps: Deps | undefined;
  /** --jq, compiled in init (before the command does anything); jq is loaded only then. */
  private jq: JqFilter | undefined;
  private stopRequest: AbortController | undefined;

  /**
   * Aborted by Ctrl-C (reason: InterruptedError) or SIGTERM (TerminatedError), for a command that
   * stops cleanly (a server, listen): it then throws the reason. A command that never reads it is
   * ended at once with the same exit code (130, 143), as is any command on a second signal.
   */
  protected get signal(): AbortSignal {
    this.stopRequest ??= new AbortController();
    return this.stopRequest.signal;
  }

  /** SIGINT and SIGTERM, handled here for every command (installed before anything is announced). */
  private handleSignals(): void {
    const on = (name: NodeJS.Signals, reason: () => MktError) =>
      process.on(name, () => {
        const stop = this.stopRequest;
        if (stop && !stop.signal.aborted) stop.abort(reason());
        else process.exit(reason().exitCode);
      });
    on('SIGINT', () => new InterruptedError());
    on('SIGTERM', () => new TerminatedError());
  }

  public override async init(): Promise<void> {
    this.handleSignals();
    await super.init();
    const { args, flags } = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (super.ctor as typeof BaseCommand).baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      args: this.ctor.args,
      strict: this.ctor.strict,
    });
    this.flags = flags as CommandFlags<T>;
    this.args = args as CommandArgs<T>;
    const expression = (flags as { jq?: string }).jq;
    if (expression !== undefined) {
      const { loadJqFilter } = await import('./output/jq.js');
      this.jq = await loadJqFilter(expression, { terminal: Boolean(process.stdout.isTTY), env: process.env });
    }
  }

  /** --json, or --jq (which filters the JSON). */
  public override jsonEnabled(): boolean {
    return super.jsonEnabled() || this.jqGiven();
  }

  /** --jq is on the command line (before any `--`), read before the flags are parsed. */
  private jqGiven(): boolean {
    if (!this.ctor.enableJsonFlag) return false;
    const end = this.argv.indexOf('--');
    return this.argv.some((a, i) => (end < 0 || i < end) && (a === '--jq' || a.startsWith('--jq=')));
  }

  /** The dependency object for domain code, built on first use. */
  protected async deps(): Promise<Deps> {
    this.builtDeps ??= await createDeps({
      env: process.env,
      // Node builds process.stdin on first use (a pipe's socket): only for the commands that read it.
      get stdin() {
        return process.stdin;
      },
      stdout: process.stdout,
      stderr: process.stderr,
      profile: this.flags.profile,
      siteUrl: this.flags['site-url'],
      verbose: this.flags.verbose,
      json: this.jsonEnabled(),
      jq: this.jq,
    });
    return this.builtDeps;
  }

  /** --json output: what run() returned, as plain, stable JSON on stdout (jsonText), or through --jq. */
  public override logJson(json: unknown): void {
    if (!this.jq) {
      process.stdout.write(jsonText(json));
      return;
    }
    // What --jq prints is settled in a promise (output/jq.ts): _run waits for it below.
    this.printing = this.jq.apply(json).then(
      ({ text, error }) => {
        process.stdout.write(text);
        // oclif prints the result after the command's own error handling: the failure is told here.
        if (error) this.reportLate(error);
      },
      (err: unknown) => this.reportLate(err),
    );
  }

  /** An error found after oclif's own handling (in --jq's output): told, and its exit code kept. */
  private reportLate(err: unknown): void {
    const io = { json: false, stdout: process.stdout, stderr: process.stderr, env: process.env };
    process.exitCode = reportError(err, io).exitCode;
  }

  /** What --jq prints of the result, once jq has run. */
  private printing: Promise<void> | undefined;

  /** oclif's run, then the end of what --jq prints (logJson starts it without waiting). */
  public override async _run<R>(): Promise<R> {
    const result = await super._run<R>();
    await this.printing;
    return result;
  }

  /** After every command: word of a newer mkt, when there is one to give (src/update/notice.ts). */
  protected override async finally(err: Error | undefined): Promise<unknown> {
    updateNotice({ env: process.env, stderr: process.stderr, json: this.jsonEnabled() });
    return super.finally(err);
  }

  /** The command's flags by name, global ones included (for "Did you mean --feature?"). */
  private flagNames(): string[] {
    return Object.keys({ ...this.ctor.flags, ...(this.ctor as typeof BaseCommand).baseFlags });
  }

  /** oclif's parse error in mkt's words, with the line that works when a flag names the argument. */
  private parseError(err: Error): UsageError {
    const asArgument = argumentGivenAsFlag(
      err.message,
      { id: this.id ?? '', args: Object.keys(this.ctor.args ?? {}) },
      this.argv,
    );
    if (asArgument) return new UsageError(asArgument.message, { hints: [asArgument.hint] });
    return new UsageError(parseErrorMessage(err.message, this.flagNames()));
  }

  protected override async catch(
    err: Error & { exitCode?: number; oclif?: { exit?: number } },
  ): Promise<unknown> {
    // oclif's own exit (this.exit) and help/version requests pass straight through.
    if (err.name === 'ExitError' || (err as { code?: string }).code === 'EEXIT') throw err;
    // A command that stopped cleanly on Ctrl-C or SIGTERM has said so: only the exit code is left.
    if (err === this.stopRequest?.signal.reason) return this.exit((err as MktError).exitCode);
    // With --jq an error is told on stderr in words (as gh does): stdout holds only what the filter
    // printed, and a failed check's document goes through the filter like an answer.
    if (this.jq && err instanceof CheckFailedError && err.document !== undefined) {
      const { text } = await this.jq.apply(err.document).catch(() => ({ text: '' }));
      process.stdout.write(text);
    }
    const json = this.jsonEnabled() && !this.jqGiven();
    const error = reportError(isParseError(err) ? this.parseError(err) : err, {
      json,
      verbose: this.flags?.verbose,
      stdout: process.stdout,
      stderr: process.stderr,
      env: process.env,
    });
    if (!json && isParseError(err))
      process.stderr.write(`  See: mkt ${this.id?.replace(/:/g, ' ') ?? ''} --help\n`);
    process.exitCode = error.exitCode;
    return this.exit(error.exitCode);
  }
}

function isParseError(err: unknown): boolean {
  const e = err as { parse?: unknown; oclif?: { exit?: number }; name?: string };
  return e.parse !== undefined || (e.oclif?.exit === 2 && !(err instanceof MktError));
}

import { Flags } from '@oclif/core';
import { BaseCommand } from '../base-command.js';
import { callApi } from '../api/raw.js';
import { arg } from '../flags.js';

export default class Api extends BaseCommand<typeof Api> {
  static summary = 'Make an authenticated request to the marketplace API and print the JSON response.';
  static description =
    'PATH is relative to {site_url}/api/v1 (for example /whoami). Fields become a JSON body for POST, PUT and PATCH, and query parameters otherwise. HTTP errors exit 4 (401/403), 5 (429 after retries), 6 (unreachable) or 1.';
  static examples = [
    '<%= config.bin %> api GET /whoami',
    '<%= config.bin %> api GET /entitlements --field user_id=usr_123',
    '<%= config.bin %> api POST /apps --field name="My App" --field redirect_uris[]=http://127.0.0.1/callback',
    'echo \'{"name":"x"}\' | <%= config.bin %> api PATCH /apps/app_123 --input -',
  ];
  static enableJsonFlag = true;
  static args = {
    method: arg({
      required: true,
      description: 'HTTP method',
      options: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'get', 'post', 'put', 'patch', 'delete'],
    }),
    path: arg({ required: true, description: 'path under {base_url}, such as /whoami' }),
  };
  static flags = {
    field: Flags.string({
      char: 'F',
      multiple: true,
      description: 'key=value (numbers, true/false and null are typed; key[]=v appends to an array)',
    }),
    input: Flags.string({ description: 'file with the JSON body, or - for stdin', exclusive: ['field'] }),
    include: Flags.boolean({
      char: 'i',
      description: 'print the status line and response headers to stderr',
    }),
  };

  async run() {
    const deps = await this.deps();
    const res = await callApi(deps, {
      method: this.args.method,
      path: this.args.path,
      fields: this.flags.field ?? [],
      input: this.flags.input,
    });
    if (this.flags.include) {
      deps.out.info(`HTTP ${res.status}`);
      for (const [k, v] of Object.entries(res.headers)) deps.out.info(`${k}: ${String(v)}`);
    }
    if (res.data !== undefined) await deps.out.json(res.data);
    else if (res.text) deps.out.data(res.text);
  }
}

import { lstatSync } from 'node:fs';
import type { Deps } from '../deps.js';
import { MktError, UsageError } from '../errors.js';
import type { Fixtures } from '../sandbox/fixtures/schema.js';

/**
 * The state of the sandbox on `folder` as a fixtures file (`mkt sandbox export`): from the running
 * sandbox (a consistent snapshot of its database, `POST /sandbox/export`) or, stopped, from the
 * folder. Each way it cannot says what is wrong: no such folder (none is made), a file where the
 * folder should be, a database that is a link, an `--output` that is a folder.
 */
export async function exportState(
  deps: Pick<Deps, 'env'>,
  input: { folder: string; output?: string },
): Promise<Fixtures> {
  const { folder, output } = input;
  if (output !== undefined && kindOf(output) === 'folder')
    throw new UsageError(
      `--output ${output} is a folder; name a file to write, such as ${output}/fixtures.json.`,
      {
        code: 'output_is_folder',
      },
    );
  const kind = kindOf(folder);
  if (kind === 'missing')
    throw new MktError('no_state', `There is no sandbox data folder at ${folder}; nothing to export.`, 1, {
      hints: [`mkt sandbox start --data-dir ${folder}`],
    });
  if (kind !== 'folder')
    throw new UsageError(`${folder} is not a folder; --data-dir names the sandbox's data folder.`, {
      code: 'not_a_folder',
    });
  const { findRunning } = await import('./running.js');
  const running = await findRunning(folder);
  if (running) return exportFromRunning(running.site_url, running.seed.test_key, folder);
  const { exportFolder, FolderInUseError, DamagedDataError } = await import('../sandbox/start-sandbox.js');
  try {
    return await exportFolder(folder);
  } catch (e) {
    if (e instanceof FolderInUseError) throw new MktError('sandbox_running', e.message, 1);
    if (e instanceof DamagedDataError) throw new MktError('damaged_data', e.message, 1);
    if (e instanceof Error && /holds no sandbox state|newer mkt/.test(e.message))
      throw new MktError('no_state', e.message, 1);
    throw e;
  }
}

function kindOf(path: string): 'missing' | 'folder' | 'other' {
  try {
    return lstatSync(path).isDirectory() ? 'folder' : 'other';
  } catch {
    return 'missing';
  }
}

async function exportFromRunning(siteUrl: string, key: string, folder: string): Promise<Fixtures> {
  let res: Response;
  try {
    res = await fetch(`${siteUrl}/api/v1/sandbox/export`, {
      method: 'POST',
      headers: { 'x-api-key': key },
      signal: AbortSignal.timeout(60_000),
    });
  } catch (e) {
    throw new MktError(
      'unreachable',
      `The sandbox on ${folder} at ${siteUrl} did not answer (${String(e)}).`,
      6,
    );
  }
  const text = await res.text();
  if (res.status !== 200) {
    let message = `HTTP ${res.status}`;
    try {
      message = (JSON.parse(text) as { error: { message: string } }).error.message;
    } catch {
      // not the API's error body: the status says enough
    }
    throw new MktError('export_failed', `The running sandbox on ${folder} refused the export: ${message}`, 1);
  }
  return JSON.parse(text) as Fixtures;
}

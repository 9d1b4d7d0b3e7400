// Writes the documents the package ships beside dist/ (npm run build runs this after tsc):
// schema/sandbox-fixtures.schema.json, the JSON Schema of `--seed` files, from the zod schema
// that reads them; schema/openapi.json, the sandbox's API, from its router (src/sandbox/openapi).
import { mkdirSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { fixturesSchema } from '../build/sandbox/fixtures/schema.js';
import { sandboxDocument } from '../build/sandbox/app.js';

mkdirSync('schema', { recursive: true });
const fixtures = {
  $id: 'sandbox-fixtures.schema.json',
  title: 'mkt sandbox fixtures',
  ...z.toJSONSchema(fixturesSchema, { io: 'input', unrepresentable: 'any' }),
};
writeFileSync('schema/sandbox-fixtures.schema.json', `${JSON.stringify(fixtures, null, 2)}\n`);
writeFileSync('schema/openapi.json', `${JSON.stringify(sandboxDocument(), null, 2)}\n`);

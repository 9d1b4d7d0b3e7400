import { describe, expect, it } from 'vitest';
import { IdTable } from '../../src/webhooks/id-table.js';
import { signatureKey } from '../../src/webhooks/signature.js';

describe('the table of deliveries by id', () => {
  it('keeps every id apart, digits and # included, and lists values in the order first set', () => {
    const table = new IdTable<string>();
    const ids = ['dlv_b', '42', '#42', '##42', '7', '__proto__', 'constructor', '', 'dlv_a'];
    for (const id of ids) table.set(id, `value of ${id}`);
    for (const id of ids) expect(table.get(id)).toBe(`value of ${id}`);
    expect(table.values()).toEqual(ids.map((id) => `value of ${id}`));
    table.delete('42');
    expect(table.get('42')).toBeUndefined();
    expect(table.get('#42')).toBe('value of #42');
    table.set('42', 'again');
    expect(table.values().at(-1)).toBe('again');
  });
});

describe('the replay key of a signature header', () => {
  it('is the same for every way of writing one signature', () => {
    const hex = 'ab'.repeat(32);
    const key = signatureKey(`sha256=${hex}`);
    expect(key).toBe(`sha256=${hex}`);
    expect(signatureKey(` sha256=${hex.toUpperCase()}\t`)).toBe(key);
    expect(signatureKey(`sha256=${'cd'.repeat(32)}`)).not.toBe(key);
  });
});

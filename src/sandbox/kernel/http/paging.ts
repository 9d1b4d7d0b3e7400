import { invalidRequest } from './problem.js';

/** A page of a list answer (docs/PROTOCOL.md, Lists). */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/**
 * Answers one page of `ids` (`?limit=` 1-100, default 20; `?cursor=` opaque). The cursor encodes the
 * offset, so a page costs O(limit) whatever the list length.
 */
export function paginate<T>(
  q: { limit?: string; cursor?: string },
  ids: readonly string[],
  view: (id: string) => T | undefined,
): Page<T> {
  const limitParam = q.limit ?? null;
  let limit = 20;
  if (limitParam !== null) {
    if (!/^\d{1,3}$/.test(limitParam) || Number(limitParam) < 1 || Number(limitParam) > 100) {
      throw invalidRequest('Query parameter "limit" must be an integer from 1 to 100.');
    }
    limit = Number(limitParam);
  }
  let offset = 0;
  const cursor = q.cursor;
  if (cursor !== undefined) {
    const decoded = /^o(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
    if (!decoded) throw invalidRequest('Query parameter "cursor" is not a cursor this server issued.');
    offset = Number(decoded[1]);
  }
  const data: T[] = [];
  for (const id of ids.slice(offset, offset + limit)) {
    const item = view(id);
    if (item !== undefined) data.push(item);
  }
  const hasMore = offset + limit < ids.length;
  return {
    data,
    has_more: hasMore,
    next_cursor: hasMore ? Buffer.from(`o${offset + limit}`, 'latin1').toString('base64url') : null,
  };
}

import type { Model, RootFilterQuery, SortOrder } from 'mongoose';
import { pageOffset, pagination, type PageQuery, type Pagination } from '@mkt/contracts/core';

/** One page of a listing and where it sits: `pagination {page, limit, total}` (ADR 0004). */
export interface Page<T> {
  items: T[];
  pagination: Pagination;
}

/**
 * The paged listing every service answers: the page's documents (lean, in `sort` order) and
 * the count of everything the filter matches, read side by side. `sort` should end in a unique
 * field (or `createdAt`, unique enough at this scale) so pages neither repeat nor skip records.
 * `hint` names the index both reads go through, for a caller certain that index serves the filter
 * and the sort (a hint naming a missing index fails the read on a real server).
 */
export async function findPage<T>(
  model: Model<T>,
  filter: RootFilterQuery<T>,
  query: PageQuery,
  sort: Record<string, SortOrder>,
  hint?: string,
): Promise<Page<T>> {
  const page = model.find(filter).sort(sort).skip(pageOffset(query)).limit(query.limit);
  const [items, total] = await Promise.all([
    (hint === undefined ? page : page.hint(hint)).lean<T[]>(),
    model.countDocuments(filter, hint === undefined ? {} : { hint }),
  ]);
  return { items, pagination: pagination(query, total) };
}

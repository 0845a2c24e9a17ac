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
 */
export async function findPage<T>(
  model: Model<T>,
  filter: RootFilterQuery<T>,
  query: PageQuery,
  sort: Record<string, SortOrder>,
): Promise<Page<T>> {
  const [items, total] = await Promise.all([
    model.find(filter).sort(sort).skip(pageOffset(query)).limit(query.limit).lean<T[]>(),
    model.countDocuments(filter),
  ]);
  return { items, pagination: pagination(query, total) };
}

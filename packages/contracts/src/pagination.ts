import { z } from 'zod';

export const MAX_PAGE_LIMIT = 100;
export const DEFAULT_PAGE_LIMIT = 20;

/** `page` ≥ 1 (default 1) and `limit` 1..100 (default 20), from query strings. */
export const PageQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT).default(DEFAULT_PAGE_LIMIT),
});
export type PageQuery = z.infer<typeof PageQuery>;

export const Pagination = z.object({
  page: z.number().int().min(1),
  limit: z.number().int().min(1),
  total: z.number().int().min(0),
});
export type Pagination = z.infer<typeof Pagination>;

/** How many records a page skips. */
export function pageOffset(query: PageQuery): number {
  return (query.page - 1) * query.limit;
}

export function pagination(query: PageQuery, total: number): Pagination {
  return { page: query.page, limit: query.limit, total };
}

/** Escapes a user's text for a case-insensitive search regex (never a pattern of theirs). */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

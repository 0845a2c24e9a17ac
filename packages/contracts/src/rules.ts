import type { z } from 'zod';

/**
 * Two kinds of bad input, two statuses (ADR 0004):
 * - 400 `invalid`: the request does not match its documented schema (type, format, bound,
 *   enum, unknown key). The OpenAPI document says all of it, so a client can check before
 *   sending.
 * - 422 `invalid`: the request matches the schema but breaks a rule JSON Schema cannot carry:
 *   one field against another (`validTo` after `validFrom`), or against stored records (a
 *   category that does not exist).
 * A refinement of a contract schema that is such a rule carries `params: RULE`; the error
 * middleware answers 422 when every issue of a request is one.
 */
export const RULE = { rule: true } as const;

/** An issue a refinement marked with `RULE`. */
export function isRuleIssue(issue: z.core.$ZodIssue): boolean {
  return issue.code === 'custom' && (issue.params as { rule?: unknown } | undefined)?.rule === true;
}

/** Adds a `RULE` issue at `path` inside a `superRefine`. */
export function breakRule(ctx: z.RefinementCtx, path: Array<string | number>, message: string): void {
  ctx.addIssue({ code: 'custom', path, message, params: RULE });
}

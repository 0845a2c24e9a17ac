import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ZodError, type z } from 'zod';

export interface RequestSchemas {
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /** A form post's fields (`application/x-www-form-urlencoded`), read from the parsed body. */
  form?: z.ZodType;
}

/** The parsed parts of a request, typed by the schemas that parsed them (only those given). */
export type ValidInput<S extends RequestSchemas> = { [K in keyof S]: S[K] extends z.ZodType ? z.output<S[K]> : never };

const PARTS = ['params', 'query', 'body', 'form'] as const;

/** Parses every part a schema is given for; all issues at once, so a client sees every problem. */
export function parseParts<S extends RequestSchemas>(schemas: S, req: Request): { input: ValidInput<S> } | { error: ZodError } {
  const issues: z.core.$ZodIssue[] = [];
  const input: Record<string, unknown> = {};
  for (const part of PARTS) {
    const schema = schemas[part];
    if (!schema) continue;
    const result = schema.safeParse(part === 'body' || part === 'form' ? (req.body ?? {}) : req[part]);
    if (result.success) input[part] = result.data;
    else issues.push(...result.error.issues);
  }
  return issues.length === 0 ? { input: input as ValidInput<S> } : { error: new ZodError(issues) };
}

/**
 * A handler that receives its request's parts parsed and typed by the contracts schemas it
 * names: `input.body` is the schema's output type, so a renamed contract field breaks the build
 * where it is read. A part without a schema is not on `input` at all. Invalid input never
 * reaches the handler (400, every issue at once); a rejection of the handler goes to the error
 * middleware.
 */
export function withInput<S extends RequestSchemas>(
  schemas: S,
  handler: (input: ValidInput<S>, req: Request, res: Response, next: NextFunction) => unknown,
): RequestHandler {
  return (req, res, next) => {
    const parsed = parseParts(schemas, req);
    if ('error' in parsed) return next(parsed.error);
    try {
      Promise.resolve(handler(parsed.input, req, res, next)).catch(next);
    } catch (err) {
      next(err);
    }
  };
}

import type { RequestHandler } from 'express';
import { ZodError, type z } from 'zod';

export interface RequestSchemas {
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
}

/**
 * Parses params, query and body with contracts schemas; the parsed values land in
 * `res.locals.params|query|body`, and a failure becomes a 400 with one item per field.
 * All parts are checked before answering, so a client sees every problem at once.
 */
export function validate(schemas: RequestSchemas): RequestHandler {
  return (req, res, next) => {
    const issues: z.core.$ZodIssue[] = [];
    for (const part of ['params', 'query', 'body'] as const) {
      const schema = schemas[part];
      if (!schema) continue;
      const result = schema.safeParse(part === 'body' ? (req.body ?? {}) : req[part]);
      if (result.success) res.locals[part] = result.data;
      else issues.push(...result.error.issues);
    }
    next(issues.length === 0 ? undefined : new ZodError(issues));
  };
}

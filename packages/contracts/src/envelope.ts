import { z } from 'zod';
import { ErrorCode } from './error-codes';
import { Pagination } from './pagination';

/** One offending field or rule: `path` is dotted ('' when the error is not about one field). */
export const ErrorItem = z.object({
  path: z.string(),
  code: z.string().meta({
    description: 'A stable error code; clients branch on it, never on the message.',
    examples: Object.values(ErrorCode),
  }),
  message: z.string(),
});
export type ErrorItem = z.infer<typeof ErrorItem>;

/** The body of every response with a status of 400 or more, from every service and the gateway. */
export const ErrorBody = z.object({
  success: z.literal(false),
  message: z.string(),
  errors: z.array(ErrorItem),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** Builds the schema of a success envelope around a `data` schema. */
export function successEnvelope<T extends z.ZodType>(data: T) {
  return z.object({
    success: z.literal(true),
    message: z.string().optional(),
    data,
    pagination: Pagination.optional(),
  });
}

export interface SuccessBody<T> {
  success: true;
  message?: string;
  data: T;
  pagination?: Pagination;
}

/** Wraps `data` in the success envelope. */
export function ok<T>(data: T, message?: string, pagination?: Pagination): SuccessBody<T> {
  const body: SuccessBody<T> = { success: true, data };
  if (message !== undefined) body.message = message;
  if (pagination !== undefined) body.pagination = pagination;
  return body;
}

/** Builds the error envelope. */
export function errorBody(message: string, errors: ErrorItem[]): ErrorBody {
  return { success: false, message, errors };
}

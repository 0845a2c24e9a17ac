import type { z } from 'zod';
import { parseConfig, serviceEnv } from '@mkt/kit';

export const ReviewEnv = serviceEnv(8085);
export type ReviewConfig = z.infer<typeof ReviewEnv>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<ReviewConfig> {
  return parseConfig(ReviewEnv, env);
}

import type { z } from 'zod';
import { parseConfig, serviceEnv } from '@mkt/kit';

export const ConsultationEnv = serviceEnv(8084);
export type ConsultationConfig = z.infer<typeof ConsultationEnv>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<ConsultationConfig> {
  return parseConfig(ConsultationEnv, env);
}

// A failure's first clues from a service's log file (pino JSON lines), for a CI log that keeps
// only what the scripts print: the containers' steps and the mixed-version run read them alike.
import { existsSync, readFileSync } from 'node:fs';

const WARNING_OR_WORSE = /"level":(4|5|6)0\b/; // pino: 40 warn, 50 error, 60 fatal

/** The last `count` lines of `file` at warning level or above (any line with `all`); none when it is missing. */
export function logClues(file, count = 6, all = false) {
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n').filter(Boolean);
  return (all ? lines : lines.filter((line) => WARNING_OR_WORSE.test(line))).slice(-count);
}

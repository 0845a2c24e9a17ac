import fs from 'node:fs';
import path from 'node:path';

/** The files at the top of a service's `src/`: the process, its parts, its commands. */
const TOP_FILES = new Set(['app.ts', 'composition.ts', 'config.ts', 'main.ts', 'migrate.ts', 'rebuild.ts', 'tracing.ts']);

/** The folders of a service's `src/`, each one level deep. */
const FOLDERS = new Set(['domain', 'application', 'db', 'http', 'events', 'migrations', 'payments', 'credentials', 'proxy']);

/** Every service has these: the process, its records, its errors, its views, its schemas, its migrations. */
const REQUIRED = [
  'app.ts',
  'composition.ts',
  'config.ts',
  'main.ts',
  'migrate.ts',
  'tracing.ts',
  'domain/records.ts',
  'domain/errors.ts',
  'db/models.ts',
  'http/views.ts',
  'migrations/index.ts',
];

const KEBAB = '[a-z0-9]+(?:-[a-z0-9]+)*';
const NAMED = (roles: string) => new RegExp(`^${KEBAB}\\.(?:${roles})\\.ts$`);

/** What each folder's file names are, and the rule a name that fits none of them breaks. */
const NAMES: Record<string, { fits: RegExp; rule: string }> = {
  domain: { fits: new RegExp(`^${KEBAB}\\.ts$`), rule: 'a domain file is domain/<concept>.ts (records.ts, errors.ts or a concept)' },
  application: {
    fits: NAMED('use-cases|steps|sweep'),
    rule: 'an application file has its role: <resource>.use-cases.ts, <x>.steps.ts or <x>.sweep.ts',
  },
  db: {
    fits: new RegExp(`^(?:models|collections)\\.ts$|^${KEBAB}\\.(?:repository|metrics|backfill)\\.ts$`),
    rule: 'a db file is models.ts, collections.ts, <record>.repository.ts, <x>.metrics.ts or <x>.backfill.ts',
  },
  http: { fits: new RegExp(`^${KEBAB}(?:\\.handlers)?\\.ts$`), rule: 'an http file is <resource>.handlers.ts, views.ts or <concept>.ts' },
  events: { fits: NAMED('consumer'), rule: 'an events file is <queue>.consumer.ts' },
  migrations: { fits: new RegExp(`^index\\.ts$|^\\d{4}-${KEBAB}\\.ts$`), rule: 'a migration is migrations/NNNN-<name>.ts (and index.ts)' },
  payments: {
    fits: new RegExp(`^${KEBAB}(?:\\.(?:provider|client))?\\.ts$`),
    rule: 'a payments file is <x>.provider.ts, <x>.client.ts or <concept>.ts',
  },
  credentials: { fits: new RegExp(`^${KEBAB}\\.ts$`), rule: 'a credentials file is credentials/<concept>.ts' },
  proxy: { fits: new RegExp(`^${KEBAB}\\.ts$`), rule: 'a proxy file is proxy/<concept>.ts' },
};

/** kit's error classes and anything named like an error: a class extending one declares a domain error. */
const ERROR_CLASS =
  /\bclass\s+\w+\s+extends\s+(?:\w*Error|BadRequest|InvalidField|Unauthenticated|Forbidden|NotFound|MethodNotAllowed|Conflict|InvalidState|RuleViolation|PayloadTooLarge|RateLimited)\b/;
/** A status and a code written by hand. */
const RAW_ERROR = /\bnew\s+AppError\s*\(/;
/** An exported type with an `_id`: a stored record. */
const RECORD = /^export (?:interface|type) \w+[^\n]*\{\n([\s\S]*?)^\}/gm;
/** A table of HTTP handlers: built with `operationHandlers`, or a function answering handlers. */
const HANDLERS = /\boperationHandlers\(|\)\s*:\s*(?:Pick<\s*)?(?:\w*OperationHandlers\b|MountedHandlers\b|\w+Operations<)/;
const CONSUMER = /\bdefineConsumer\s*\(/;
const SUBSCRIPTION = /SUBSCRIPTIONS\[\s*['"][\w-]+\.([\w-]+)['"]\s*\]/g;

/**
 * The files of a service's `src/` that break the one layout every service keeps (docs/
 * architecture.md, "A service's files"), each as `<file>: <the rule>`; empty when it keeps it.
 * Names: an unknown top-level file or folder, a nested folder, a name that does not say its
 * role in its folder. Places: a stored record type (an exported type with an `_id`) outside
 * `domain/records.ts`, a domain error (a class extending an error, a hand-written `new
 * AppError(`) outside `domain/errors.ts`, a handler table outside `http/<resource>.handlers.ts`
 * (`app.ts` mounts them),
 * a consumer outside `events/<queue>.consumer.ts`, a consumer file reading other than one queue. A missing
 * required file (records, errors, views, models, …) is named too: nothing is tolerated by
 * its absence.
 */
export function serviceLayout(src: string): string[] {
  const found: string[] = [];
  const breaks = (file: string, rule: string) => found.push(`${file}: ${rule}`);
  if (!fs.existsSync(src)) return [`${src}: no such folder`];
  const files = fs
    .readdirSync(src, { recursive: true, encoding: 'utf8' })
    .map((file) => file.split(path.sep).join('/'))
    .filter((file) => fs.statSync(path.join(src, file)).isFile())
    .sort();
  for (const required of REQUIRED) if (!files.includes(required)) breaks(required, 'missing: every service has it');
  for (const file of files) {
    const parts = file.split('/');
    if (!file.endsWith('.ts')) {
      breaks(file, 'a service’s src/ holds TypeScript only');
      continue;
    }
    if (parts.length === 1) {
      if (!TOP_FILES.has(file)) breaks(file, `a top-level file is one of ${[...TOP_FILES].join(', ')}`);
    } else if (!FOLDERS.has(parts[0]!)) {
      breaks(file, `unknown top-level folder: the folders are ${[...FOLDERS].join(', ')}`);
      continue;
    } else if (parts.length > 2) {
      breaks(file, 'no folder inside a service’s folders');
      continue;
    } else if (!NAMES[parts[0]!]!.fits.test(parts[1]!)) {
      breaks(file, NAMES[parts[0]!]!.rule);
    }
    const text = fs.readFileSync(path.join(src, file), 'utf8');
    if (file !== 'domain/errors.ts' && (ERROR_CLASS.test(text) || RAW_ERROR.test(text)))
      breaks(file, 'the service’s errors are declared in domain/errors.ts');
    if (file !== 'domain/records.ts' && [...text.matchAll(RECORD)].some(([, body]) => /^ {2}_id\??:/m.test(body!)))
      breaks(file, 'a stored record type (one with an _id) is declared in domain/records.ts');
    const handlersFile = /^http\/[^/]+\.handlers\.ts$/.test(file);
    if (!handlersFile && file !== 'app.ts' && HANDLERS.test(text)) breaks(file, 'handlers are in http/<resource>.handlers.ts');
    const consumerFile = /^events\/[^/]+\.consumer\.ts$/.test(file);
    if (!consumerFile && CONSUMER.test(text)) breaks(file, 'a consumer is in events/<queue>.consumer.ts');
    if (consumerFile) {
      const queues = [...text.matchAll(SUBSCRIPTION)].map(([, queue]) => queue);
      if (queues.length !== 1) breaks(file, `one consumer per queue, one queue per file (this one reads ${queues.join(', ') || 'none'})`);
      else if (file !== `events/${queues[0]}.consumer.ts`)
        breaks(file, `a consumer file is named by its queue (events/${queues[0]}.consumer.ts)`);
    }
  }
  return found;
}

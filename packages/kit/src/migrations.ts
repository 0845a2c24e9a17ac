import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { OutboxSource } from './bus/outbox';
import { ensureOutboxIndexes } from './bus/outbox';
import type { Logger } from './logger';
import { ensureIndexes, type AnyModel, type Database } from './mongo';

/** What a migration is given: the service's database (open), its log, its models and outbox sources. */
export interface MigrationContext {
  db: Database;
  log: Logger;
  models: AnyModel[];
  outboxSources: OutboxSource[];
}

/**
 * One step of a service's stored shape, named `NNNN-what-it-does` (the number orders them).
 * `up` must be safe to run again after a crash half-way (it is not recorded until it ends);
 * `down` is left out where the step cannot be undone (the data it dropped is gone).
 */
export interface Migration {
  name: string;
  up: (context: MigrationContext) => Promise<void>;
  down?: (context: MigrationContext) => Promise<void>;
  /**
   * What the step works from, when its code is kit's, shared by several steps
   * (`indexBuildMigration`'s indexes). When set, it is the checksum's whole content beside the
   * name: a step whose indexes changed reads as changed, and a change of kit's own code (a
   * rename, another compiler's output) does not mark every step built with it.
   */
  definition?: string;
  /**
   * Checksums a released version of this step was recorded with, for the same work in other
   * compiled code (a module renamed, another compiler's output): a record with one of them is not
   * marked as changed. Only for code known to do what this step does: when `up` or `down` change
   * what they do, delete the entries (nothing checks it for you; they affect `status` only, never
   * what runs). Each is 16 hex digits, as `migrationChecksum` makes them (the constructor refuses others).
   */
  formerChecksums?: readonly string[];
}

/** What `migrations` holds for each migration that ran (`_id` is its name). */
export interface MigrationRecord {
  _id: string;
  checksum: string;
  appliedAt: Date;
  durationMs: number;
  by: string;
}

export interface MigrationStatus {
  name: string;
  state: 'applied' | 'pending';
  reversible: boolean;
  appliedAt?: Date;
  durationMs?: number;
  /** Applied with other code than this release's (its checksum differs). */
  changed?: boolean;
}

export interface MigratorOptions {
  context: MigrationContext;
  migrations: Migration[];
  /** How long a lease lasts unless renewed; renewed every third of it while a run holds it. */
  leaseMs?: number;
  /** How long a run waits for a lease another run holds before it gives up. */
  waitMs?: number;
  /** Who holds the lease (host and process), for the log and the lease document. */
  owner?: string;
}

export const MIGRATIONS_COLLECTION = 'migrations';
export const MIGRATION_LEASE_COLLECTION = 'migration_lease';
const LEASE_ID = 'migrations';

/** The lease is held by another run past the wait. */
export class MigrationLeaseBusyError extends Error {
  constructor(readonly holder: string | undefined) {
    super(`migrations are being run by ${holder ?? 'another run'}; gave up waiting for its lease`);
  }
}

/** A service started on a database its migrations have not all reached. */
export class DatabaseBehindError extends Error {
  constructor(
    readonly dbName: string,
    readonly pending: string[],
  ) {
    super(
      `database ${dbName} is behind this release: migrations not applied: ${pending.join(', ')}. ` +
        "Run the service's migrate command (`node dist/migrate.js up`) first; the service will not start until then.",
    );
  }
}

/**
 * The checksum of a migration: its code (what ran is what the record says ran), or, for a step
 * built by kit from a definition, its definition.
 */
export function migrationChecksum(migration: Migration): string {
  const hash = createHash('sha256').update(migration.name);
  if (migration.definition !== undefined) hash.update('\0definition\0').update(migration.definition);
  else hash.update(String(migration.up)).update(String(migration.down ?? ''));
  return hash.digest('hex').slice(0, 16);
}

/** Whether a record's checksum is this step's, or one of its released versions' of the same work. */
function checksumHolds(migration: Migration, recorded: string): boolean {
  return recorded === migrationChecksum(migration) || (migration.formerChecksums ?? []).includes(recorded);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const isDuplicateKey = (err: unknown) => (err as { code?: number } | null)?.code === 11000;

/**
 * Runs a service's migrations against its own database. Every change (`up`, `down`) runs under a
 * lease: one document of `migration_lease` with a fixed `_id`, taken by one conditional write
 * (free, expired, or already ours) — an insert racing another finds the unique `_id` taken. While
 * a run holds it, it renews it; a run that died leaves it to expire, and the next one takes it
 * over. A migration that ran is recorded in `migrations` (name, checksum, when, how long); one that
 * failed is not, and the lease is released either way.
 */
export class Migrator {
  private readonly leaseMs: number;
  private readonly waitMs: number;
  readonly owner: string;

  constructor(private readonly options: MigratorOptions) {
    this.leaseMs = options.leaseMs ?? 60_000;
    this.waitMs = options.waitMs ?? 10 * 60_000;
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    const names = options.migrations.map(({ name }) => name);
    if (new Set(names).size !== names.length) throw new Error(`migration names repeat: ${names.join(', ')}`);
    const sorted = [...names].sort();
    if (sorted.join() !== names.join()) throw new Error(`migrations out of order: ${names.join(', ')}`);
    for (const { name, formerChecksums = [] } of options.migrations) {
      const malformed = formerChecksums.filter((checksum) => !/^[0-9a-f]{16}$/.test(checksum));
      if (malformed.length > 0) throw new Error(`migration ${name}: former checksums are 16 hex digits, not ${malformed.join(', ')}`);
    }
  }

  private get records() {
    return this.options.context.db.collection<MigrationRecord>(MIGRATIONS_COLLECTION);
  }

  private get leases() {
    return this.options.context.db.collection<{ _id: string; owner: string; expiresAt: Date; takenAt: Date }>(MIGRATION_LEASE_COLLECTION);
  }

  async status(): Promise<MigrationStatus[]> {
    const records = new Map((await this.records.find({}).toArray()).map((record) => [record._id, record]));
    return this.options.migrations.map((migration) => {
      const record = records.get(migration.name);
      const reversible = migration.down !== undefined;
      if (!record) return { name: migration.name, state: 'pending', reversible };
      return {
        name: migration.name,
        state: 'applied',
        reversible,
        appliedAt: record.appliedAt,
        durationMs: record.durationMs,
        changed: !checksumHolds(migration, record.checksum),
      };
    });
  }

  /** The names of the migrations this release knows and the database has not had. */
  async pending(): Promise<string[]> {
    return (await this.status()).filter(({ state }) => state === 'pending').map(({ name }) => name);
  }

  /** Applies every pending migration in order (up to and including `to`); answers the names applied. */
  async up(options: { to?: string } = {}): Promise<string[]> {
    return this.underLease(async (lease) => {
      const applied: string[] = [];
      const done = new Set((await this.records.find({}, { projection: { _id: 1 } }).toArray()).map(({ _id }) => _id));
      for (const migration of this.options.migrations) {
        if (options.to !== undefined && migration.name > options.to) break;
        if (done.has(migration.name)) continue;
        lease.check();
        await this.apply(migration);
        applied.push(migration.name);
      }
      return applied;
    });
  }

  /** Undoes the last `steps` applied migrations (newest first); one without `down` stops it. */
  async down(options: { steps?: number } = {}): Promise<string[]> {
    const steps = options.steps ?? 1;
    return this.underLease(async (lease) => {
      const reverted: string[] = [];
      const done = new Set((await this.records.find({}, { projection: { _id: 1 } }).toArray()).map(({ _id }) => _id));
      const applied = this.options.migrations.filter(({ name }) => done.has(name)).reverse();
      for (const migration of applied.slice(0, steps)) {
        if (!migration.down) throw new Error(`migration ${migration.name} cannot be undone (it has no down)`);
        lease.check();
        const { log } = this.options.context;
        const started = Date.now();
        await migration.down(this.options.context);
        await this.records.deleteOne({ _id: migration.name });
        log.info({ migration: migration.name, durationMs: Date.now() - started }, 'migration undone');
        reverted.push(migration.name);
      }
      return reverted;
    });
  }

  private async apply(migration: Migration): Promise<void> {
    const { log } = this.options.context;
    const started = Date.now();
    log.info({ migration: migration.name }, 'migration running');
    try {
      await migration.up(this.options.context);
    } catch (err) {
      log.error({ err, migration: migration.name }, 'migration failed; not recorded');
      throw err;
    }
    const durationMs = Date.now() - started;
    await this.records.insertOne({
      _id: migration.name,
      checksum: migrationChecksum(migration),
      appliedAt: new Date(),
      durationMs,
      by: this.owner,
    });
    log.info({ migration: migration.name, durationMs }, 'migration applied');
  }

  /** Takes the lease (waiting while another run holds it), runs `work`, and releases it. */
  private async underLease<T>(work: (lease: { check: () => void }) => Promise<T>): Promise<T> {
    await this.acquire();
    let lost = false;
    const renew = setInterval(
      () => {
        this.leases
          .updateOne({ _id: LEASE_ID, owner: this.owner }, { $set: { expiresAt: new Date(Date.now() + this.leaseMs) } })
          .then((result) => {
            if (result.matchedCount === 0) lost = true;
          })
          .catch((err: unknown) => this.options.context.log.warn({ err }, 'migration lease not renewed; retrying'));
      },
      Math.max(50, Math.floor(this.leaseMs / 3)),
    );
    renew.unref();
    const lease = {
      check: () => {
        if (lost) throw new Error('the migration lease was lost (taken over after it expired); stopping');
      },
    };
    try {
      return await work(lease);
    } finally {
      clearInterval(renew);
      await this.release();
    }
  }

  /** One conditional write: the lease if it is free, expired or ours; a taken `_id` otherwise. */
  async tryAcquire(now = new Date()): Promise<boolean> {
    try {
      await this.leases.updateOne(
        { _id: LEASE_ID, $or: [{ expiresAt: { $lte: now } }, { owner: this.owner }] },
        { $set: { owner: this.owner, takenAt: now, expiresAt: new Date(now.getTime() + this.leaseMs) } },
        { upsert: true },
      );
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  private async acquire(): Promise<void> {
    const deadline = Date.now() + this.waitMs;
    let said = false;
    for (;;) {
      if (await this.tryAcquire()) return;
      const holder = await this.leases.findOne({ _id: LEASE_ID });
      if (Date.now() > deadline) throw new MigrationLeaseBusyError(holder?.owner);
      if (!said) this.options.context.log.info({ holder: holder?.owner, until: holder?.expiresAt }, 'waiting for the migration lease');
      said = true;
      await sleep(Math.min(500, Math.max(20, this.leaseMs / 4)));
    }
  }

  private async release(): Promise<void> {
    await this.leases.deleteOne({ _id: LEASE_ID, owner: this.owner });
  }
}

/**
 * The first migration of every service: the indexes its models declare (unique keys above all)
 * and the outbox sweep index. Creating an index that exists changes nothing, so a later release
 * that adds an index to a model adds a migration built with this too.
 */
export function indexesMigration(name: string): Migration {
  return {
    name,
    up: async ({ models, outboxSources }) => {
      await ensureIndexes(models);
      await ensureOutboxIndexes(outboxSources);
    },
  };
}

/** An index a migration builds or drops: its collection, keys in order and options (its name always). */
export interface IndexSpec {
  collection: string;
  key: Readonly<Record<string, 1 | -1>>;
  name: string;
  partialFilterExpression?: Readonly<Record<string, unknown>>;
  sparse?: boolean;
}

async function buildIndexes(db: Database, indexes: readonly IndexSpec[]): Promise<void> {
  for (const { collection, key, ...options } of indexes) await db.collection(collection).createIndex({ ...key }, options);
}

async function dropIndexes(db: Database, indexes: readonly IndexSpec[]): Promise<void> {
  for (const { collection, name } of indexes) {
    const target = db.collection(collection);
    if ((await target.indexExists(name)) as boolean) await target.dropIndex(name);
  }
}

/**
 * The step that gives a database made before them the indexes a release's models added (a
 * database made by that release has them from its `indexesMigration`): builds `build`, then drops
 * `replaces` — indexes the new ones make redundant, dropped only once those are built, so their
 * keys are never without an index. Building an index that exists, or dropping one that is gone,
 * changes nothing: a run again after a crash is safe. `down` builds `replaces` again, then drops
 * `build` — only beside the previous release's processes (this release's reads may hint them).
 */
export function indexBuildMigration(name: string, build: readonly IndexSpec[], replaces: readonly IndexSpec[] = []): Migration {
  return {
    name,
    // The builder and its version are part of the definition: a change of what this step does
    // (not of how kit's code reads) is made by bumping it, so the records of steps built by the
    // one before read as changed.
    definition: JSON.stringify({ builder: 'indexBuildMigration/1', build, replaces }),
    up: async ({ db }) => {
      await buildIndexes(db, build);
      await dropIndexes(db, replaces);
    },
    down: async ({ db }) => {
      await buildIndexes(db, replaces);
      await dropIndexes(db, build);
    },
  };
}

/**
 * The migrate command of a service's `dist/migrate.js`: `up [--to NAME]`, `down [--steps N]`,
 * `status`. Answers the exit code; prints status as one line per migration.
 */
export async function runMigrateCommand(migrator: Migrator, argv: string[], print: (line: string) => void): Promise<number> {
  const [command = 'status', ...rest] = argv;
  const flag = (name: string) => {
    const at = rest.indexOf(name);
    return at >= 0 ? rest[at + 1] : undefined;
  };
  if (command === 'up') {
    const applied = await migrator.up({ to: flag('--to') });
    print(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'nothing to apply: the database is up to date');
    return 0;
  }
  if (command === 'down') {
    const steps = Number(flag('--steps') ?? '1');
    if (!Number.isInteger(steps) || steps < 1) {
      print('--steps must be a whole number of at least 1');
      return 2;
    }
    const reverted = await migrator.down({ steps });
    print(reverted.length > 0 ? `undone: ${reverted.join(', ')}` : 'nothing to undo');
    return 0;
  }
  if (command === 'status') {
    for (const entry of await migrator.status()) {
      const when = entry.appliedAt ? ` ${entry.appliedAt.toISOString()} (${entry.durationMs} ms)` : '';
      const changed = entry.changed ? ' [code changed since it ran]' : '';
      print(`${entry.state.padEnd(7)} ${entry.name}${when}${entry.reversible ? '' : ' [irreversible]'}${changed}`);
    }
    return 0;
  }
  print(`usage: migrate up [--to NAME] | down [--steps N] | status (not "${command}")`);
  return 2;
}

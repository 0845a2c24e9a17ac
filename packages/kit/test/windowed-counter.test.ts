import mongoose, { mongo } from 'mongoose';
import pino from 'pino';
import { context, trace, ROOT_CONTEXT, type Context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { calendarWindow } from '@mkt/kit/domain';
import { WindowedCounter, windowedCounterSchema, openDatabase } from '@mkt/kit/db';
import { startWireCounter, testServers, uniqueName } from '@mkt/infra';

const Counter = mongoose.model('WindowedCounter', windowedCounterSchema(), 'windowed_counters');
const counter = new WindowedCounter(Counter);
const at = (iso: string) => new Date(iso);

beforeAll(async () => {
  await openDatabase(mongoose.connection, {
    url: testServers().mongoUrl,
    dbName: uniqueName('kit_counter'),
    log: pino({ level: 'silent' }),
  });
  await Counter.createIndexes();
});
afterAll(() => mongoose.disconnect());

describe('WindowedCounter.take', () => {
  test('60 takes racing on a new key with a limit of 20: exactly 20 are granted and counted', async () => {
    const key = uniqueName('race');
    const granted = await Promise.all(Array.from({ length: 60 }, () => counter.take(key, 20, at('2030-01-01T00:01:00Z'))));
    expect(granted.filter(Boolean)).toHaveLength(20);
    expect(await counter.count(key)).toBe(20);
  });

  test('takes racing on a counter that has places left: exactly the free places are granted', async () => {
    const key = uniqueName('race');
    for (let i = 0; i < 7; i += 1) await counter.take(key, 10, at('2030-01-01T00:01:00Z'));
    const granted = await Promise.all(Array.from({ length: 30 }, () => counter.take(key, 10, at('2030-01-01T00:01:00Z'))));
    expect(granted.filter(Boolean)).toHaveLength(3);
    expect(await counter.count(key)).toBe(10);
  });

  test('a first take that loses the race to create the counter still gets a free place', async () => {
    // The development server runs one write at a time, so the race real servers have (two first
    // takes both miss the counter, one insert collides) is staged: another instance creates the
    // counter just before this take's upsert, which then collides as it would on a real server.
    const key = uniqueName('first');
    let staged = false;
    // The counter's first write (on the driver's collection) meets a counter made in between.
    const collection = new Proxy(Counter.collection, {
      get(target, name) {
        const value: unknown = Reflect.get(target, name, target);
        if (name !== 'findOneAndUpdate' || staged) return typeof value === 'function' ? value.bind(target) : value;
        staged = true;
        return async () => {
          await Counter.create({ _id: key, count: 1, expiresAt: at('2030-01-01T00:01:00Z') });
          await Counter.create({ _id: key, count: 1, expiresAt: at('2030-01-01T00:01:00Z') });
        };
      },
    });
    const racing = new Proxy(Counter, {
      get: (model, name, receiver) => (name === 'collection' ? collection : Reflect.get(model, name, receiver)),
    });
    expect(await new WindowedCounter(racing).take(key, 2, at('2030-01-01T00:01:00Z'))).toBe(true);
    expect(await counter.count(key)).toBe(2);
  });

  test('a refused take does not count, and a limit of 0 refuses without writing', async () => {
    const key = uniqueName('full');
    expect(await counter.take(key, 1, at('2030-01-01T00:01:00Z'))).toBe(true);
    expect(await counter.take(key, 1, at('2030-01-01T00:01:00Z'))).toBe(false);
    expect(await counter.take(key, 1, at('2030-01-01T00:01:00Z'))).toBe(false);
    expect(await counter.count(key)).toBe(1);
    const unused = uniqueName('zero');
    expect(await counter.take(unused, 0, at('2030-01-01T00:01:00Z'))).toBe(false);
    expect(await Counter.exists({ _id: unused })).toBeNull();
  });
});

describe('WindowedCounter.takeCounting', () => {
  test('answers the places taken with this one, and null once the window is full', async () => {
    const key = uniqueName('counting');
    const counts = [];
    for (let i = 0; i < 4; i += 1) counts.push(await counter.takeCounting(key, 3, at('2030-01-01T00:01:00Z')));
    expect(counts).toEqual([1, 2, 3, null]);
    expect(await counter.count(key)).toBe(3);
  });

  test('takes several places at once only while that many are free', async () => {
    const key = uniqueName('batch');
    const endsAt = at('2030-01-01T00:01:00Z');
    expect(await counter.takeCounting(key, 10, endsAt, 4)).toBe(4);
    expect(await counter.takeCounting(key, 10, endsAt, 4)).toBe(8);
    expect(await counter.takeCounting(key, 10, endsAt, 4)).toBeNull();
    expect(await counter.takeCounting(key, 10, endsAt, 2)).toBe(10);
    expect(await counter.count(key)).toBe(10);
  });
});

describe('WindowedCounter.giveBack', () => {
  test('a place given back can be taken again; giving back never goes below zero', async () => {
    const key = uniqueName('back');
    await counter.take(key, 2, at('2030-01-01T00:01:00Z'));
    await counter.take(key, 2, at('2030-01-01T00:01:00Z'));
    expect(await counter.take(key, 2, at('2030-01-01T00:01:00Z'))).toBe(false);
    await counter.giveBack(key);
    expect(await counter.count(key)).toBe(1);
    expect(await counter.take(key, 2, at('2030-01-01T00:01:00Z'))).toBe(true);
    for (let i = 0; i < 4; i += 1) await counter.giveBack(key);
    expect(await counter.count(key)).toBe(0);
    await counter.giveBack(uniqueName('never-taken'));
  });
});

describe('windows', () => {
  test('a full minute refuses until the next one, which is a new counter; expired windows are swept', async () => {
    const user = uniqueName('user');
    const take = (now: Date) => {
      const minute = calendarWindow('minute', now);
      return counter.take(`${user}|${minute.key}`, 2, minute.endsAt);
    };
    expect(await take(at('2030-05-01T10:00:01Z'))).toBe(true);
    expect(await take(at('2030-05-01T10:00:30Z'))).toBe(true);
    expect(await take(at('2030-05-01T10:00:59.999Z'))).toBe(false);
    expect(await take(at('2030-05-01T10:01:00Z'))).toBe(true);
    expect(await counter.count(`${user}|2030-05-01T10:00`)).toBe(2);

    expect(await counter.deleteExpired(at('2030-05-01T10:01:00Z'))).toBeGreaterThanOrEqual(0);
    expect(await counter.count(`${user}|2030-05-01T10:00`)).toBe(2); // ends at 10:01, not before
    await counter.deleteExpired(at('2030-05-01T10:01:30Z'));
    expect(await counter.count(`${user}|2030-05-01T10:00`)).toBe(0);
    expect(await counter.count(`${user}|2030-05-01T10:01`)).toBe(1);
    await counter.deleteExpired(at('2030-05-01T10:05:00Z'));
    expect(await Counter.countDocuments({ _id: { $in: [`${user}|2030-05-01T10:00`, `${user}|2030-05-01T10:01`] } })).toBe(0);
  });

  test('calendar windows in UTC: minute, hour, day, ISO week from Monday, month from the 1st', () => {
    expect(calendarWindow('minute', at('2030-05-01T10:00:45.5Z'))).toEqual({ key: '2030-05-01T10:00', endsAt: at('2030-05-01T10:01:00Z') });
    expect(calendarWindow('hour', at('2030-05-01T23:59:59.9Z'))).toEqual({ key: '2030-05-01T23', endsAt: at('2030-05-02T00:00:00Z') });
    expect(calendarWindow('day', at('2031-08-31T23:59:59Z'))).toEqual({ key: '2031-08-31', endsAt: at('2031-09-01T00:00:00Z') });
    // 2031-08-31 is a Sunday: still the week of Monday 08-25; Monday 09-01 starts the next.
    expect(calendarWindow('week', at('2031-08-31T23:59:59Z'))).toEqual({ key: 'W2031-08-25', endsAt: at('2031-09-01T00:00:00Z') });
    expect(calendarWindow('week', at('2031-09-01T00:00:00Z'))).toEqual({ key: 'W2031-09-01', endsAt: at('2031-09-08T00:00:00Z') });
    // A week across a year's end keeps its Monday's date.
    expect(calendarWindow('week', at('2031-01-01T12:00:00Z')).key).toBe('W2030-12-30');
    expect(calendarWindow('month', at('2032-02-29T23:00:00Z'))).toEqual({ key: '2032-02', endsAt: at('2032-03-01T00:00:00Z') });
    expect(calendarWindow('month', at('2031-12-31T23:59:59Z'))).toEqual({ key: '2031-12', endsAt: at('2032-01-01T00:00:00Z') });
  });
});

describe('WindowedCounter.takeSoon', () => {
  /** The driver calls a counter makes while `work` runs (its collection proxied, as the test above stages a race). */
  async function commandsDuring<T>(work: (counted: WindowedCounter) => Promise<T>): Promise<{ result: T; commands: string[] }> {
    const commands: string[] = [];
    const collection = new Proxy(Counter.collection, {
      get(target, name) {
        const value: unknown = Reflect.get(target, name, target);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          commands.push(String(name));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const model = new Proxy(Counter, {
      get: (target, name, receiver) => (name === 'collection' ? collection : Reflect.get(target, name, receiver)),
    });
    return { result: await work(new WindowedCounter(model)), commands };
  }

  test('takes asked in one turn go together: new counters, counters with places left and a full one, each answered as takeCounting would', async () => {
    const endsAt = at('2030-01-01T00:01:00Z');
    const fresh = Array.from({ length: 6 }, () => uniqueName('crowd'));
    const used = uniqueName('used');
    const full = uniqueName('full');
    await counter.takeCounting(used, 100, endsAt, 10);
    await counter.takeCounting(full, 12, endsAt, 12);
    const { result, commands } = await commandsDuring((counted) =>
      Promise.all([
        ...fresh.map((key) => counted.takeSoon(key, 1200, endsAt, 12)),
        counted.takeSoon(used, 100, endsAt, 12),
        counted.takeSoon(full, 12, endsAt, 12),
      ]),
    );
    expect(result).toEqual([12, 12, 12, 12, 12, 12, 22, null]);
    // One bulk write for the eight, one read of the counts that existed, one guarded retry of the collision.
    expect(commands).toEqual(['bulkWrite', 'find', 'findOneAndUpdate']);
    for (const key of fresh) expect(await counter.count(key)).toBe(12);
    expect(await counter.count(used)).toBe(22);
    // A refused take changes nothing.
    expect(await counter.count(full)).toBe(12);
  });

  test('takes racing in batches on one key with a limit of 20: exactly 20 places are granted', async () => {
    const key = uniqueName('batched-race');
    const endsAt = at('2030-01-01T00:01:00Z');
    const granted = await Promise.all(Array.from({ length: 60 }, () => counter.takeSoon(key, 20, endsAt)));
    expect(granted.filter((count) => count !== null)).toHaveLength(20);
    expect(await counter.count(key)).toBe(20);
  });

  test('a take alone in its turn is one guarded upsert', async () => {
    const { result, commands } = await commandsDuring((counted) =>
      counted.takeSoon(uniqueName('alone'), 10, at('2030-01-01T00:01:00Z'), 2),
    );
    expect(result).toBe(2);
    expect(commands).toEqual(['findOneAndUpdate']);
  });
});

describe('WindowedCounter.takeSoon when the bulk write fails as a whole', () => {
  /**
   * The counters' model with its bulk write sent through a client whose connection to the server
   * was cut (a relay in between, stopped): the command fails as a whole (a network error, then
   * no server for the retry) and the driver wraps that in a MongoBulkWriteError with no write
   * errors. Every other command (the read of the counts) reaches the server as usual.
   */
  async function failingBulkWrites(): Promise<{ model: typeof Counter; close: () => Promise<void> }> {
    const relay = await startWireCounter(testServers().mongoUrl);
    const client = new mongo.MongoClient(relay.url, { serverSelectionTimeoutMS: 1_000, directConnection: true });
    await client.connect();
    await relay.stop();
    const broken = client.db(Counter.db.name).collection(Counter.collection.name);
    const collection = new Proxy(Counter.collection, {
      get(target, name) {
        const from: object = name === 'bulkWrite' ? broken : target;
        const value: unknown = Reflect.get(from, name, from);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(from) : value;
      },
    });
    const model = new Proxy(Counter, {
      get: (target, name, receiver) => (name === 'collection' ? collection : Reflect.get(target, name, receiver)),
    });
    return { model, close: () => client.close() };
  }

  test('every take of the batch is rejected with the write error, none granted, nothing counted', async () => {
    const { model, close } = await failingBulkWrites();
    const endsAt = at('2030-01-01T00:01:00Z');
    const keys = [uniqueName('lost'), uniqueName('lost'), uniqueName('lost')];
    const used = keys[2]!;
    await counter.takeCounting(used, 100, endsAt, 5);
    const counted = new WindowedCounter(model);
    const answers = await Promise.allSettled(keys.map((key) => counted.takeSoon(key, 100, endsAt, 4)));
    expect(answers.map((answer) => answer.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const answer of answers) expect((answer as PromiseRejectedResult).reason).toBeInstanceOf(mongo.MongoBulkWriteError);
    expect(await counter.count(keys[0]!)).toBe(0);
    expect(await counter.count(keys[1]!)).toBe(0);
    expect(await counter.count(used)).toBe(5);
    await close();
  });

  test('the batch is written outside the trace context of the caller that queued it first', async () => {
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    try {
      const seen: Context[] = [];
      const collection = new Proxy(Counter.collection, {
        get(target, name) {
          const value: unknown = Reflect.get(target, name, target);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            if (name === 'bulkWrite') seen.push(context.active());
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
      const model = new Proxy(Counter, {
        get: (target, name, receiver) => (name === 'collection' ? collection : Reflect.get(target, name, receiver)),
      });
      const counted = new WindowedCounter(model);
      const caller = trace.setSpanContext(ROOT_CONTEXT, { traceId: '1'.repeat(32), spanId: '2'.repeat(16), traceFlags: 1 });
      const endsAt = at('2030-01-01T00:01:00Z');
      const answers = await context.with(caller, () =>
        Promise.all([counted.takeSoon(uniqueName('traced'), 10, endsAt), counted.takeSoon(uniqueName('traced'), 10, endsAt)]),
      );
      expect(answers).toEqual([1, 1]);
      expect(seen).toHaveLength(1);
      expect(trace.getSpanContext(seen[0]!)).toBeUndefined();
    } finally {
      context.disable();
    }
  });
});

import { defineFlow, kindStep, resumeFlow, runFlow, type StepKind, type StepStatus } from '@mkt/kit/steps';
// How the runner names a compensation and reads a flow turning back: kit's own, not exported.
import { compensationOpId, isCompensating } from '../src/steps';

/**
 * The step runner over an in-memory "database": a ledger that applies an op once by its id,
 * and records that say which of their steps are done. A crash is an error thrown at a chosen
 * point; resuming is running the flow again over the record as the crash left it.
 */
interface Transfer {
  id: string;
  amount: number;
  debit: StepStatus;
  credit: StepStatus;
}

class World {
  balances = new Map<string, number>([
    ['alice', 100],
    ['bob', 0],
  ]);
  applied = new Set<string>();
  records = new Map<string, Transfer>();
  after: string[] = [];
  crashAt: string | null = null;
  ceiling = Infinity;

  crash(point: string): void {
    if (this.crashAt === point) {
      this.crashAt = null;
      throw new Error(`crash at ${point}`);
    }
  }
}

class NoRoom extends Error {}

interface Move {
  wallet: string;
  delta: number;
}

function ledgerKind(world: World): StepKind<Move, boolean> {
  return {
    async apply(move, opId) {
      world.crash(`apply:${opId}`);
      if (world.applied.has(opId)) return false;
      const next = (world.balances.get(move.wallet) ?? 0) + move.delta;
      if (next < 0) throw new Error('insufficient');
      if (move.delta > 0 && next > world.ceiling) throw new NoRoom();
      world.balances.set(move.wallet, next);
      world.applied.add(opId);
      world.crash(`applied:${opId}`);
      return true;
    },
    async after(applied, _move, opId) {
      world.after.push(`${opId}:${applied ? 'applied' : 'repeat'}`);
    },
  };
}

function transferFlow(world: World) {
  const kind = ledgerKind(world);
  const recordDone = (field: 'debit' | 'credit') => async (record: Transfer) => {
    const stored = world.records.get(record.id)!;
    const next = { ...stored, [field]: 'done' as const };
    world.records.set(record.id, next);
    world.crash(`recorded:${field}`);
    return next;
  };
  return defineFlow<Transfer>('transfer', [
    kindStep(kind, {
      name: 'debit',
      opId: (t) => `transfer:${t.id}:debit`,
      status: (t) => t.debit,
      work: (t) => ({ wallet: 'alice', delta: -t.amount }),
      record: recordDone('debit'),
    }),
    kindStep(kind, {
      name: 'credit',
      opId: (t) => `transfer:${t.id}:credit`,
      status: (t) => (t.debit === 'done' ? t.credit : 'skip'),
      work: (t) => ({ wallet: 'bob', delta: t.amount }),
      record: recordDone('credit'),
      waitsOn: (err) => err instanceof NoRoom,
    }),
  ]);
}

function newTransfer(world: World, id: string, amount = 30): Transfer {
  const record: Transfer = { id, amount, debit: 'todo', credit: 'todo' };
  world.records.set(id, record);
  return record;
}

const unfinished = (world: World) => async () => [...world.records.values()].filter((t) => t.debit !== 'done' || t.credit !== 'done');

describe('runFlow', () => {
  test('runs every step still to do, in order, and says which ran', async () => {
    const world = new World();
    const run = await runFlow(transferFlow(world), newTransfer(world, 't1'));
    expect(run.ran).toEqual(['debit', 'credit']);
    expect(run.stoppedAt).toBeNull();
    expect(run.record).toMatchObject({ debit: 'done', credit: 'done' });
    expect(Object.fromEntries(world.balances)).toEqual({ alice: 70, bob: 30 });
    expect(world.after).toEqual(['transfer:t1:debit:applied', 'transfer:t1:credit:applied']);
  });

  test('skips the steps the record says are done or not part of the run', async () => {
    const world = new World();
    const record = { ...newTransfer(world, 't1'), debit: 'done' as const };
    world.records.set('t1', record);
    const run = await runFlow(transferFlow(world), record);
    expect(run.ran).toEqual(['credit']);
    expect(Object.fromEntries(world.balances)).toEqual({ alice: 100, bob: 30 });
    const skipped = await runFlow(transferFlow(world), { id: 't2', amount: 5, debit: 'skip', credit: 'todo' });
    expect(skipped.ran).toEqual([]);
  });

  test('a refusal the step waits on stops the flow with the step still owed; a later run finishes it', async () => {
    const world = new World();
    world.ceiling = 10;
    const flow = transferFlow(world);
    const first = await runFlow(flow, newTransfer(world, 't1'));
    expect(first.ran).toEqual(['debit']);
    expect(first.stoppedAt).toMatchObject({ step: 'credit' });
    expect(first.stoppedAt!.error).toBeInstanceOf(NoRoom);
    expect(first.record).toMatchObject({ debit: 'done', credit: 'todo' });
    world.ceiling = Infinity;
    const second = await runFlow(flow, world.records.get('t1')!);
    expect(second.ran).toEqual(['credit']);
    expect(Object.fromEntries(world.balances)).toEqual({ alice: 70, bob: 30 });
  });

  test('any other error goes up, and the step stays to do', async () => {
    const world = new World();
    const flow = transferFlow(world);
    await expect(runFlow(flow, newTransfer(world, 't1', 500))).rejects.toThrow('insufficient');
    expect(world.records.get('t1')).toMatchObject({ debit: 'todo', credit: 'todo' });
  });

  test('a step that ran but could not record itself ends the run there', async () => {
    const world = new World();
    const kind = ledgerKind(world);
    const flow = defineFlow<Transfer>('stuck', [
      kindStep(kind, {
        name: 'debit',
        opId: (t) => `x:${t.id}`,
        status: (t) => t.debit,
        work: (t) => ({ wallet: 'alice', delta: -t.amount }),
        record: async (t) => t, // the record moved on meanwhile: nothing recorded
      }),
      kindStep(kind, {
        name: 'credit',
        opId: (t) => `y:${t.id}`,
        status: (t) => t.credit,
        work: (t) => ({ wallet: 'bob', delta: t.amount }),
        record: async (t) => ({ ...t, credit: 'done' as const }),
      }),
    ]);
    const run = await runFlow(flow, newTransfer(world, 't1'));
    expect(run.ran).toEqual(['debit']);
    expect(run.stoppedAt).toEqual({ step: 'debit' });
    expect(world.balances.get('bob')).toBe(0);
  });

  test('a run’s context reaches every step of it (who asked, under which correlation id)', async () => {
    const seen: string[] = [];
    const step = (name: string) => ({
      name,
      opId: () => name,
      status: (record: { done: string[] }) => (record.done.includes(name) ? ('done' as const) : ('todo' as const)),
      run: async (record: { done: string[] }, _opId: string, context: { correlationId: string }) => {
        seen.push(`${name}:${context.correlationId}`);
        return { done: [...record.done, name] };
      },
    });
    const flow = defineFlow('with-context', [step('a'), step('b')]);
    await runFlow(flow, { done: [] }, { correlationId: 'c1' });
    await resumeFlow(flow, { unfinished: async () => [{ done: ['a'] }], context: () => ({ correlationId: 'c2' }) });
    expect(seen).toEqual(['a:c1', 'b:c1', 'b:c2']);
  });

  test('step names are unique in a flow', () => {
    const step = { name: 'a', opId: () => 'a', status: () => 'todo' as const, run: async (r: unknown) => r };
    expect(() => defineFlow('twice', [step, step])).toThrow('two steps named a');
  });
});

describe('resumeFlow after a crash at every point of a flow', () => {
  const points = [
    'apply:transfer:t1:debit',
    'applied:transfer:t1:debit',
    'recorded:debit',
    'apply:transfer:t1:credit',
    'applied:transfer:t1:credit',
    'recorded:credit',
  ];

  test.each(points)('crashed at %s: the resume finishes it, every op applied once', async (point) => {
    const world = new World();
    const flow = transferFlow(world);
    world.crashAt = point;
    await expect(runFlow(flow, newTransfer(world, 't1'))).rejects.toThrow(`crash at ${point}`);
    await resumeFlow(flow, { unfinished: unfinished(world) });
    await resumeFlow(flow, { unfinished: unfinished(world) }); // a second sweep finds nothing to do
    expect(world.records.get('t1')).toMatchObject({ debit: 'done', credit: 'done' });
    expect(Object.fromEntries(world.balances)).toEqual({ alice: 70, bob: 30 });
    expect([...world.applied].sort()).toEqual(['transfer:t1:credit', 'transfer:t1:debit']);
  });

  test('a crash after applying and before recording: the repeat is a no-op that still records', async () => {
    const world = new World();
    const flow = transferFlow(world);
    world.crashAt = 'applied:transfer:t1:debit';
    await expect(runFlow(flow, newTransfer(world, 't1'))).rejects.toThrow();
    const [run] = await resumeFlow(flow, { unfinished: unfinished(world) });
    expect(run!.ran).toEqual(['debit', 'credit']);
    expect(world.after).toEqual(['transfer:t1:debit:repeat', 'transfer:t1:credit:applied']);
  });

  test('a failing record does not stop the others when onError takes it', async () => {
    const world = new World();
    const flow = transferFlow(world);
    newTransfer(world, 'poor', 1_000);
    newTransfer(world, 't2');
    const failed: string[] = [];
    const runs = await resumeFlow(flow, {
      unfinished: unfinished(world),
      onError: (_err, record) => {
        failed.push(record.id);
      },
    });
    expect(failed).toEqual(['poor']);
    expect(runs.map((run) => run.record.id)).toEqual(['t2']);
    await expect(resumeFlow(flow, { unfinished: unfinished(world) })).rejects.toThrow('insufficient');
  });
});

/**
 * Compensation over an in-memory "database": counters that take and give back once by op id,
 * and an order whose record keeps each step's status. A crash is an error thrown at a chosen
 * point; resuming is running the flow again over the record as the crash left it.
 */
interface Order {
  id: string;
  steps: Record<string, StepStatus>;
}

class Shop {
  stock = new Map<string, number>([
    ['slot', 1],
    ['day', 1],
    ['coupon', 1],
  ]);
  applied = new Set<string>();
  log: string[] = [];
  records = new Map<string, Order>();
  crashAt: string | null = null;
  /** What the payment step answers: refused (for good), busy (waits), or paid. */
  payment: 'paid' | 'refused' | 'busy' = 'paid';

  crash(point: string): void {
    if (this.crashAt === point) {
      this.crashAt = null;
      throw new Error(`crash at ${point}`);
    }
  }

  /** Moves a counter once by op id (a repeat changes nothing). */
  move(counter: string, delta: number, opId: string): void {
    this.crash(`apply:${opId}`);
    if (this.applied.has(opId)) return;
    const next = this.stock.get(counter)! + delta;
    if (next < 0) throw new SoldOut(counter);
    this.stock.set(counter, next);
    this.applied.add(opId);
    this.log.push(opId);
    this.crash(`applied:${opId}`);
  }

  mark(record: Order, step: string, status: StepStatus): Order {
    const stored = this.records.get(record.id)!;
    const next = { ...stored, steps: { ...stored.steps, [step]: status } };
    this.records.set(record.id, next);
    this.crash(`recorded:${step}:${status}`);
    return next;
  }
}

class SoldOut extends Error {}
class Busy extends Error {}

function orderFlow(shop: Shop) {
  const take = (name: string) => ({
    name,
    opId: (o: Order) => `order:${o.id}:${name}`,
    status: (o: Order) => o.steps[name] ?? 'todo',
    run: async (o: Order, opId: string) => {
      shop.move(name, -1, opId);
      return shop.mark(o, name, 'done');
    },
    failsOn: (err: unknown) => err instanceof SoldOut,
    fail: async (o: Order) => shop.mark(o, name, 'failed'),
    compensate: async (o: Order, opId: string) => {
      shop.move(name, +1, opId);
      return shop.mark(o, name, 'compensated');
    },
  });
  return defineFlow<Order>('order', [
    take('slot'),
    take('day'),
    take('coupon'),
    {
      name: 'pay',
      opId: (o) => `order:${o.id}:pay`,
      status: (o) => o.steps.pay ?? 'todo',
      run: async (o) => {
        if (shop.payment === 'busy') throw new Busy();
        // The refusal is an answer the step records itself: the record says it failed for good.
        return shop.mark(o, 'pay', shop.payment === 'paid' ? 'done' : 'failed');
      },
      waitsOn: (err) => err instanceof Busy,
    },
    {
      // Nothing to undo: a step without compensate is passed over when the flow turns back.
      name: 'confirm',
      opId: (o) => `order:${o.id}:confirm`,
      status: (o) => o.steps.confirm ?? 'todo',
      run: async (o) => shop.mark(o, 'confirm', 'done'),
    },
  ]);
}

function newOrder(shop: Shop, id: string): Order {
  const record: Order = { id, steps: {} };
  shop.records.set(id, record);
  return record;
}

const ORDER_STEPS = ['slot', 'day', 'coupon', 'pay', 'confirm'];
const finished = (flow: ReturnType<typeof orderFlow>, o: Order) =>
  isCompensating(flow, o) ? ORDER_STEPS.every((s) => o.steps[s] !== 'done' || s === 'pay' || s === 'confirm') : o.steps.confirm === 'done';
const unfinishedOrders = (shop: Shop, flow: ReturnType<typeof orderFlow>) => async () =>
  [...shop.records.values()].filter((o) => !finished(flow, o));
const fullStock = { slot: 1, day: 1, coupon: 1 };

describe('compensation', () => {
  test('a step that fails for good turns the flow back: the steps done are compensated in reverse order', async () => {
    const shop = new Shop();
    shop.stock.set('coupon', 0);
    const flow = orderFlow(shop);
    const run = await runFlow(flow, newOrder(shop, 'o1'));
    expect(run.ran).toEqual(['slot', 'day']);
    expect(run.failed).toMatchObject({ step: 'coupon' });
    expect(run.failed!.error).toBeInstanceOf(SoldOut);
    expect(run.compensated).toEqual(['day', 'slot']);
    expect(run.stoppedAt).toBeNull();
    expect(shop.log).toEqual(['order:o1:slot', 'order:o1:day', 'order:o1:day:compensate', 'order:o1:slot:compensate']);
    expect(run.record.steps).toEqual({ slot: 'compensated', day: 'compensated', coupon: 'failed' });
    expect(Object.fromEntries(shop.stock)).toEqual({ slot: 1, day: 1, coupon: 0 });
  });

  test('a failure the step records itself (the record says failed) turns the flow back too', async () => {
    const shop = new Shop();
    shop.payment = 'refused';
    const flow = orderFlow(shop);
    const run = await runFlow(flow, newOrder(shop, 'o1'));
    expect(run.ran).toEqual(['slot', 'day', 'coupon', 'pay']);
    expect(run.failed).toEqual({ step: 'pay' });
    expect(run.compensated).toEqual(['coupon', 'day', 'slot']);
    expect(Object.fromEntries(shop.stock)).toEqual(fullStock);
    expect(run.record.steps.confirm).toBeUndefined();
  });

  test('compensation is idempotent: running the turned-back flow again gives nothing back twice', async () => {
    const shop = new Shop();
    shop.payment = 'refused';
    const flow = orderFlow(shop);
    const first = await runFlow(flow, newOrder(shop, 'o1'));
    const again = await runFlow(flow, first.record);
    expect(again).toMatchObject({ ran: [], compensated: [], failed: { step: 'pay' }, stoppedAt: null });
    // Even a stale copy of the record (taken before the compensation) repeats each undo as a no-op.
    const stale: Order = { id: 'o1', steps: { slot: 'done', day: 'done', coupon: 'done', pay: 'failed' } };
    await runFlow(flow, stale);
    expect(Object.fromEntries(shop.stock)).toEqual(fullStock);
    expect(shop.log.filter((op) => op.endsWith(':compensate')).sort()).toEqual([
      'order:o1:coupon:compensate',
      'order:o1:day:compensate',
      'order:o1:slot:compensate',
    ]);
  });

  test('a waiting step does not compensate: the flow stops with what it took, and a later run finishes it', async () => {
    const shop = new Shop();
    shop.payment = 'busy';
    const flow = orderFlow(shop);
    const first = await runFlow(flow, newOrder(shop, 'o1'));
    expect(first).toMatchObject({ ran: ['slot', 'day', 'coupon'], stoppedAt: { step: 'pay' }, failed: null, compensated: [] });
    expect(Object.fromEntries(shop.stock)).toEqual({ slot: 0, day: 0, coupon: 0 });
    shop.payment = 'paid';
    const [second] = await resumeFlow(flow, { unfinished: unfinishedOrders(shop, flow) });
    expect(second).toMatchObject({ ran: ['pay', 'confirm'], failed: null, compensated: [] });
  });

  test('an error that is neither a wait nor a failure goes up and compensates nothing', async () => {
    const shop = new Shop();
    const flow = orderFlow(shop);
    shop.crashAt = 'apply:order:o1:coupon';
    await expect(runFlow(flow, newOrder(shop, 'o1'))).rejects.toThrow('crash at apply:order:o1:coupon');
    expect(shop.records.get('o1')!.steps).toEqual({ slot: 'done', day: 'done' });
    expect(isCompensating(flow, shop.records.get('o1')!)).toBe(false);
  });

  const compensationPoints = [
    'recorded:pay:failed',
    'apply:order:o1:coupon:compensate',
    'applied:order:o1:coupon:compensate',
    'recorded:coupon:compensated',
    'apply:order:o1:day:compensate',
    'applied:order:o1:day:compensate',
    'recorded:day:compensated',
    'apply:order:o1:slot:compensate',
    'applied:order:o1:slot:compensate',
  ];

  test.each(compensationPoints)('crashed during compensation at %s: the resume finishes it, each undo applied once', async (point) => {
    const shop = new Shop();
    shop.payment = 'refused';
    const flow = orderFlow(shop);
    shop.crashAt = point;
    await expect(runFlow(flow, newOrder(shop, 'o1'))).rejects.toThrow(`crash at ${point}`);
    expect(isCompensating(flow, shop.records.get('o1')!)).toBe(true);
    const [resumed] = await resumeFlow(flow, { unfinished: unfinishedOrders(shop, flow) });
    expect(resumed).toMatchObject({ ran: [], failed: { step: 'pay' }, stoppedAt: null });
    expect(await resumeFlow(flow, { unfinished: unfinishedOrders(shop, flow) })).toEqual([]); // nothing left
    expect(shop.records.get('o1')!.steps).toEqual({ slot: 'compensated', day: 'compensated', coupon: 'compensated', pay: 'failed' });
    expect(Object.fromEntries(shop.stock)).toEqual(fullStock);
    expect(shop.log.filter((op) => op.endsWith(':compensate')).sort()).toEqual([
      'order:o1:coupon:compensate',
      'order:o1:day:compensate',
      'order:o1:slot:compensate',
    ]);
  });

  test('a crash right after a failure is recorded: the resume turns the flow back from the record', async () => {
    const shop = new Shop();
    shop.stock.set('day', 0);
    const flow = orderFlow(shop);
    shop.crashAt = 'recorded:day:failed';
    await expect(runFlow(flow, newOrder(shop, 'o1'))).rejects.toThrow();
    // The record says the day failed: the resume compensates the slot only, and takes nothing.
    const [resumed] = await resumeFlow(flow, { unfinished: unfinishedOrders(shop, flow) });
    expect(resumed).toMatchObject({ ran: [], failed: { step: 'day' }, compensated: ['slot'] });
    expect(Object.fromEntries(shop.stock)).toEqual({ slot: 1, day: 0, coupon: 1 });
  });

  test('a compensation that could not record itself stops the run there', async () => {
    const shop = new Shop();
    shop.payment = 'refused';
    const base = orderFlow(shop);
    const flow = defineFlow<Order>(
      'stuck-undo',
      base.steps.map((step) => (step.name === 'day' ? { ...step, compensate: async (o: Order) => o } : step)),
    );
    const run = await runFlow(flow, newOrder(shop, 'o1'));
    expect(run.compensated).toEqual(['coupon', 'day']);
    expect(run.stoppedAt).toEqual({ step: 'day' });
    expect(run.record.steps.slot).toBe('done');
  });

  test('kindStep carries a step’s failure and compensation', async () => {
    const world = new World();
    const kind = ledgerKind(world);
    const undone: string[] = [];
    const step = kindStep<Transfer, Move, boolean>(kind, {
      name: 'debit',
      opId: (t) => `k:${t.id}`,
      status: (t) => t.debit,
      work: (t) => ({ wallet: 'alice', delta: -t.amount }),
      record: async (t) => ({ ...t, debit: 'done' as const }),
      failsOn: (err) => err instanceof Error && err.message === 'insufficient',
      compensate: async (t, opId) => {
        undone.push(opId);
        return { ...t, debit: 'compensated' as const };
      },
    });
    expect(step.failsOn!(new Error('insufficient'))).toBe(true);
    await step.compensate!({ id: 't1', amount: 1, debit: 'done', credit: 'todo' }, compensationOpId('k:t1'));
    expect(undone).toEqual(['k:t1:compensate']);
  });
});

describe('a flow given up as a whole', () => {
  test('turns back what is done, though no step failed (a cancel after the flow finished)', async () => {
    const shop = new Shop();
    const base = orderFlow(shop);
    const flow = defineFlow<Order & { cancelled?: boolean }>('cancellable', base.steps, { givenUp: (o) => o.cancelled === true });
    const done = await runFlow(flow, newOrder(shop, 'o1'));
    expect(done.ran).toEqual(ORDER_STEPS);
    expect(isCompensating(flow, done.record)).toBe(false);
    const cancelled = { ...shop.records.get('o1')!, cancelled: true };
    shop.records.set('o1', cancelled);
    const run = await runFlow(flow, cancelled);
    expect(run).toMatchObject({ ran: [], failed: { step: 'cancellable' }, compensated: ['coupon', 'day', 'slot'], stoppedAt: null });
    expect(Object.fromEntries(shop.stock)).toEqual(fullStock);
  });
});

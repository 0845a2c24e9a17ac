import { defineFlow, kindStep, resumeFlow, runFlow, type StepKind, type StepStatus } from '@mkt/kit/steps';

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

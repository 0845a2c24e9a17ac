/**
 * One runner for multi-step flows. A flow is a table of named steps over the record
 * that owns it; each step says, from that record alone, whether it is still to do, and names
 * its op id (what makes running it twice do it once). Running a flow runs the steps still to
 * do, in order; resuming after a crash is running it again over the records a query finds
 * unfinished: the steps already recorded are skipped, the one a crash interrupted is repeated
 * (its op id makes the repeat a no-op) and the rest follow. Nothing here knows what a step
 * does: a service brings its own kinds of step (the wallet's applies an op to a wallet).
 */

/** Where a step stands, read from the owning record: still to do, done, or not part of this run. */
export type StepStatus = 'todo' | 'done' | 'skip';

export interface Step<R, C = void> {
  readonly name: string;
  /** The step's op id for this record (stable: the same record gives the same id on every run). */
  opId(record: R): string;
  status(record: R): StepStatus;
  /**
   * Does the step (idempotent by `opId`) and records it on the owning record; answers the record
   * as it now stands. `context` is the run's (who asked, under which correlation id), the same
   * for every step of a run.
   */
  run(record: R, opId: string, context: C): Promise<R>;
  /**
   * A refusal that leaves the step owed, for a later run to retry (no room under a ceiling, a
   * wallet not there yet): the flow stops there and answers the record as it stands. Any other
   * error goes up to the caller.
   */
  waitsOn?(error: unknown): boolean;
}

export interface Flow<R, C = void> {
  readonly name: string;
  readonly steps: readonly Step<R, C>[];
}

/** A flow's table, checked once: step names are unique (they name the steps in logs and answers). */
export function defineFlow<R, C = void>(name: string, steps: readonly Step<R, C>[]): Flow<R, C> {
  const names = new Set<string>();
  for (const step of steps) {
    if (names.has(step.name)) throw new Error(`Flow ${name} has two steps named ${step.name}`);
    names.add(step.name);
  }
  return { name, steps };
}

export interface FlowRun<R> {
  /** The record as the last step left it. */
  record: R;
  /** The steps this run did, in order. */
  ran: string[];
  /**
   * Where the run stopped before the end, if it did: a step that waits (its refusal), or a step
   * that ran but is still to do on the record (another run recorded the record elsewhere).
   */
  stoppedAt: { step: string; error?: unknown } | null;
}

/** Runs the steps of `flow` still to do on `record`, in order. */
export async function runFlow<R, C = void>(flow: Flow<R, C>, record: R, ...[context]: C extends void ? [] : [C]): Promise<FlowRun<R>> {
  let current = record;
  const ran: string[] = [];
  for (const step of flow.steps) {
    if (step.status(current) !== 'todo') continue;
    try {
      current = await step.run(current, step.opId(current), context as C);
    } catch (error) {
      if (step.waitsOn?.(error)) return { record: current, ran, stoppedAt: { step: step.name, error } };
      throw error;
    }
    ran.push(step.name);
    if (step.status(current) === 'todo') return { record: current, ran, stoppedAt: { step: step.name } };
  }
  return { record: current, ran, stoppedAt: null };
}

export interface ResumeOptions<R, C = void> {
  /** The records whose flow may be unfinished (a crash, a step that waits), read from their owner. */
  unfinished: () => Promise<R[]>;
  /** The context of each record's run (flows with a context only). */
  context?: (record: R) => C;
  /** A record whose run failed: by default the error goes up and the resume stops there. */
  onError?: (error: unknown, record: R) => Promise<void> | void;
}

/** Resumes a flow: runs it again over every unfinished record, one after the other. Answers the runs. */
export async function resumeFlow<R, C = void>(flow: Flow<R, C>, options: ResumeOptions<R, C>): Promise<FlowRun<R>[]> {
  const runs: FlowRun<R>[] = [];
  for (const record of await options.unfinished()) {
    try {
      const context = options.context?.(record) as C;
      runs.push(await (runFlow as (f: Flow<R, C>, r: R, c: C) => Promise<FlowRun<R>>)(flow, record, context));
    } catch (error) {
      if (!options.onError) throw error;
      await options.onError(error, record);
    }
  }
  return runs;
}

/**
 * A kind of step: how work of one sort is applied once by its op id, and what follows once the
 * owning record has recorded it (in that order: a crash between the two leaves the record
 * saying the step is still to do, and the repeat finds the work applied).
 */
export interface StepKind<W, A> {
  apply(work: W, opId: string): Promise<A>;
  after(applied: A, work: W, opId: string): Promise<void>;
}

export interface KindStepSpec<R, W, C = void> {
  name: string;
  opId(record: R): string;
  status(record: R): StepStatus;
  /** The work of this step for this record. */
  work(record: R, opId: string, context: C): W | Promise<W>;
  /** Records the step done on the owning record (a guarded write); answers the record as it now stands. */
  record(record: R, opId: string, context: C): Promise<R>;
  waitsOn?(error: unknown): boolean;
}

/** A step of a kind: apply the work (once, by op id), record it on the owning record, then the kind's `after`. */
export function kindStep<R, W, A, C = void>(kind: StepKind<W, A>, spec: KindStepSpec<R, W, C>): Step<R, C> {
  return {
    name: spec.name,
    opId: spec.opId,
    status: spec.status,
    waitsOn: spec.waitsOn,
    run: async (record, opId, context) => {
      const work = await spec.work(record, opId, context);
      const applied = await kind.apply(work, opId);
      const next = await spec.record(record, opId, context);
      await kind.after(applied, work, opId);
      return next;
    },
  };
}

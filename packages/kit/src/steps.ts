/**
 * One runner for multi-step flows. A flow is a table of named steps over the record
 * that owns it; each step says, from that record alone, whether it is still to do, and names
 * its op id (what makes running it twice do it once). Running a flow runs the steps still to
 * do, in order; resuming after a crash is running it again over the records a query finds
 * unfinished: the steps already recorded are skipped, the one a crash interrupted is repeated
 * (its op id makes the repeat a no-op) and the rest follow. Nothing here knows what a step
 * does: a service brings its own kinds of step (the wallet's applies an op to a wallet).
 *
 * A step that fails for good (its refusal, or a failure the record says it had) turns the flow
 * back: the steps already done are compensated in reverse order, each compensation idempotent by
 * its own op id and recorded on the owning record. The record alone says the flow is turning
 * back (a step failed, or one is compensated already), so a crash during compensation is
 * resumed the same way: running the flow again compensates what is still done.
 */

/**
 * Where a step stands, read from the owning record: still to do, done, or not part of this run;
 * `failed`: it failed for good (the flow compensates); `compensated`: done, then undone.
 */
export type StepStatus = 'todo' | 'done' | 'skip' | 'failed' | 'compensated';

export interface Step<R, C = void> {
  readonly name: string;
  /** The step's op id for this record (stable: the same record gives the same id on every run). */
  opId(record: R): string;
  status(record: R): StepStatus;
  /**
   * Does the step (idempotent by `opId`) and records it on the owning record; answers the record
   * as it now stands. `context` is the run's (who asked, under which correlation id), the same
   * for every step of a run. A step may record that it failed for good (its status `failed`).
   */
  run(record: R, opId: string, context: C): Promise<R>;
  /**
   * A refusal that leaves the step owed, for a later run to retry (no room under a ceiling, a
   * wallet not there yet): the flow stops there and answers the record as it stands; nothing is
   * compensated. Any other error goes up to the caller, unless the step `failsOn` it.
   */
  waitsOn?(error: unknown): boolean;
  /**
   * A refusal that fails the step for good: the runner records it (`fail`, when the step has
   * one) and compensates the steps done before it, then answers the refusal in `failed`.
   */
  failsOn?(error: unknown): boolean;
  /** Records on the owning record that the step failed for good (a guarded write); answers the record. */
  fail?(record: R, error: unknown, context: C): Promise<R>;
  /**
   * Undoes the step (idempotent by `opId`, the compensation's own) and records it compensated
   * on the owning record; answers the record as it now stands. A step without it has nothing to
   * undo.
   */
  compensate?(record: R, opId: string, context: C): Promise<R>;
}

export interface FlowOptions<R> {
  /**
   * The owning record says the flow as a whole was given up (a cancel after it finished, an
   * attempt a crash left behind): it turns back as if a step had failed for good.
   */
  givenUp?(record: R): boolean;
}

export interface Flow<R, C = void> extends FlowOptions<R> {
  readonly name: string;
  readonly steps: readonly Step<R, C>[];
}

/** A flow's table, checked once: step names are unique (they name the steps in logs and answers). */
export function defineFlow<R, C = void>(name: string, steps: readonly Step<R, C>[], options: FlowOptions<R> = {}): Flow<R, C> {
  const names = new Set<string>();
  for (const step of steps) {
    if (names.has(step.name)) throw new Error(`Flow ${name} has two steps named ${step.name}`);
    names.add(step.name);
  }
  return { name, steps, ...(options.givenUp ? { givenUp: options.givenUp } : {}) };
}

/** The op id of a step's compensation: its own, derived from the step's. */
export const compensationOpId = (opId: string): string => `${opId}:compensate`;

/**
 * Whether the record says its flow is turning back: given up as a whole, a step failed for good,
 * or one is compensated already (a compensation a crash interrupted).
 */
export function isCompensating<R, C>(flow: Flow<R, C>, record: R): boolean {
  if (flow.givenUp?.(record)) return true;
  return flow.steps.some((step) => {
    const status = step.status(record);
    return status === 'failed' || status === 'compensated';
  });
}

export interface FlowRun<R> {
  /** The record as the last step left it. */
  record: R;
  /** The steps this run did, in order. */
  ran: string[];
  /**
   * Where the run stopped before the end, if it did: a step that waits (its refusal), or a step
   * that ran (or was compensated) but is still where it was on the record (another run recorded
   * the record elsewhere).
   */
  stoppedAt: { step: string; error?: unknown } | null;
  /**
   * The step that failed for good, if one did (its refusal, when this run saw it): the flow
   * turned back. A flow given up as a whole names itself.
   */
  failed: { step: string; error?: unknown } | null;
  /** The steps this run compensated, in the order it did (the reverse of the flow's). */
  compensated: string[];
}

/** Runs the steps of `flow` still to do on `record`, in order; a step failed for good turns it back. */
export async function runFlow<R, C = void>(flow: Flow<R, C>, record: R, ...[context]: C extends void ? [] : [C]): Promise<FlowRun<R>> {
  let current = record;
  const ran: string[] = [];
  let failed: FlowRun<R>['failed'] = null;
  const stop = (step: string, error?: unknown): FlowRun<R> => ({
    record: current,
    ran,
    stoppedAt: error === undefined ? { step } : { step, error },
    failed,
    compensated: [],
  });
  if (isCompensating(flow, current)) {
    // Turning back already (a crash during compensation): what is still done is compensated.
    const step = flow.steps.find((s) => s.status(current) === 'failed') ?? flow.steps.find((s) => s.status(current) === 'compensated');
    return compensateFrom(flow, current, ran, { step: step?.name ?? flow.name }, context as C);
  }
  for (const step of flow.steps) {
    if (step.status(current) !== 'todo') continue;
    try {
      current = await step.run(current, step.opId(current), context as C);
    } catch (error) {
      if (step.waitsOn?.(error)) return stop(step.name, error);
      if (!step.failsOn?.(error)) throw error;
      if (step.fail) current = await step.fail(current, error, context as C);
      failed = { step: step.name, error };
      break;
    }
    ran.push(step.name);
    const after = step.status(current);
    if (after === 'failed') {
      failed = { step: step.name };
      break;
    }
    if (after === 'todo') return stop(step.name);
  }
  if (!failed) return { record: current, ran, stoppedAt: null, failed: null, compensated: [] };
  return compensateFrom(flow, current, ran, failed, context as C);
}

/** The steps still done on the record, compensated in reverse order of the flow. */
async function compensateFrom<R, C>(
  flow: Flow<R, C>,
  record: R,
  ran: string[],
  failed: NonNullable<FlowRun<R>['failed']>,
  context: C,
): Promise<FlowRun<R>> {
  let current = record;
  const compensated: string[] = [];
  for (const step of [...flow.steps].reverse()) {
    if (!step.compensate || step.status(current) !== 'done') continue;
    current = await step.compensate(current, compensationOpId(step.opId(current)), context);
    compensated.push(step.name);
    if (step.status(current) === 'done') return { record: current, ran, stoppedAt: { step: step.name }, failed, compensated };
  }
  return { record: current, ran, stoppedAt: null, failed, compensated };
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
  failsOn?(error: unknown): boolean;
  fail?(record: R, error: unknown, context: C): Promise<R>;
  /** Undoes the step (idempotent by its compensation op id) and records it compensated. */
  compensate?(record: R, opId: string, context: C): Promise<R>;
}

/** A step of a kind: apply the work (once, by op id), record it on the owning record, then the kind's `after`. */
export function kindStep<R, W, A, C = void>(kind: StepKind<W, A>, spec: KindStepSpec<R, W, C>): Step<R, C> {
  return {
    name: spec.name,
    opId: spec.opId,
    status: spec.status,
    waitsOn: spec.waitsOn,
    failsOn: spec.failsOn,
    fail: spec.fail,
    compensate: spec.compensate,
    run: async (record, opId, context) => {
      const work = await spec.work(record, opId, context);
      const applied = await kind.apply(work, opId);
      const next = await spec.record(record, opId, context);
      await kind.after(applied, work, opId);
      return next;
    },
  };
}

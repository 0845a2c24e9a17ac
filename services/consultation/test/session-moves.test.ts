import { movedFields, SESSION_MOVES } from '../src/domain/sessions';

const startsAt = new Date('2030-05-01T09:00:00.000Z');
const at = new Date('2030-05-01T09:50:00.000Z');

describe('movedFields: what each session move sets', () => {
  test('start: the new status and startedAt; notes when given', () => {
    expect(movedFields({ startsAt, startedAt: null }, 'start', { notes: 'on time' }, at)).toEqual({
      status: 'In Progress',
      startedAt: at,
      notes: 'on time',
    });
  });

  test('end: endedAt, whole minutes since the actual start (else the slot), summary and next steps', () => {
    const startedAt = new Date('2030-05-01T09:05:20.000Z');
    expect(movedFields({ startsAt, startedAt }, 'end', { sessionSummary: 'sum', nextSteps: 'next' }, at)).toEqual({
      status: 'Completed',
      endedAt: at,
      duration: 45,
      sessionSummary: 'sum',
      nextSteps: 'next',
    });
    expect(movedFields({ startsAt, startedAt: null }, 'end', {}, at)).toMatchObject({ duration: 50 });
  });

  test('no-show: markedAt only; summary and next steps of the end are not taken', () => {
    expect(movedFields({ startsAt, startedAt: null }, 'no-show', { sessionSummary: 'x', nextSteps: 'y' }, at)).toEqual({
      status: 'No Show',
      markedAt: at,
    });
  });

  test('each move lands in the status of the interface table', () => {
    for (const move of ['start', 'end', 'no-show'] as const)
      expect(movedFields({ startsAt, startedAt: null }, move, {}, at).status).toBe(SESSION_MOVES[move].to);
  });
});

import type { IncomingMessage } from 'node:http';
import pino from 'pino';
import type { WindowedCounter } from '@mkt/kit/db';
import { clientAddress, trustedHopValue } from '../src/http/rate-limit';
import { SharedLimit } from '../src/http/shared-limit';

/** A counter in memory with the guarded take of kit's WindowedCounter, counting its writes. */
function memoryCounter() {
  const counts = new Map<string, number>();
  const counter = {
    writes: 0,
    async takeCounting(key: string, limit: number, _endsAt: Date, places = 1): Promise<number | null> {
      counter.writes += 1;
      const count = counts.get(key) ?? 0;
      if (count + places > limit) return null;
      counts.set(key, count + places);
      return count + places;
    },
    takeSoon(key: string, limit: number, endsAt: Date, places = 1): Promise<number | null> {
      return counter.takeCounting(key, limit, endsAt, places);
    },
  };
  return counter;
}

const at = new Date('2030-01-01T00:00:10Z');
const limitOf = (limit: number, counter: ReturnType<typeof memoryCounter>) =>
  new SharedLimit(
    { name: 'ip', limit, window: 'minute', whenUnavailable: 'allow' },
    counter as unknown as WindowedCounter,
    pino({ level: 'silent' }),
    () => true,
  );

describe('SharedLimit', () => {
  test('a hit on a lease this replica holds is decided at once, without a promise or a write', async () => {
    const counter = memoryCounter();
    const limit = limitOf(1200, counter);
    const first = limit.take('10.0.0.1', at);
    expect(first).toBeInstanceOf(Promise);
    expect((await first).headers.value).toBe('limit=1200, remaining=1199, reset=50');
    const second = limit.take('10.0.0.1', at);
    expect(second).not.toBeInstanceOf(Promise);
    expect(second).toMatchObject({ headers: { value: 'limit=1200, remaining=1198, reset=50' }, refused: null });
    expect(counter.writes).toBe(1);
  });

  test('a quiet key takes its next lease when this one is spent, a busy key while half of it is left', async () => {
    const quietCounter = memoryCounter();
    const quiet = limitOf(1200, quietCounter);
    // 12 hits (one lease) two seconds apart: one write, none ahead for places it may never use.
    for (let i = 0; i < 12; i += 1) await quiet.take('10.0.0.3', new Date(at.getTime() + i * 2000));
    expect(quietCounter.writes).toBe(1);
    await quiet.take('10.0.0.3', new Date(at.getTime() + 24_000));
    expect(quietCounter.writes).toBe(2);

    const busyCounter = memoryCounter();
    const busy = limitOf(1200, busyCounter);
    // The same hits 10 ms apart: the next lease is asked for at the sixth, before this one is spent.
    for (let i = 0; i < 7; i += 1) await busy.take('10.0.0.4', new Date(at.getTime() + i * 10));
    expect(busyCounter.writes).toBe(2);
  });

  test('the budget holds: every hit past the limit is refused, a known full key without a write', async () => {
    const counter = memoryCounter();
    const limit = limitOf(300, counter);
    const outcomes = [];
    for (let i = 0; i < 310; i += 1) outcomes.push(await limit.take('10.0.0.2', at));
    expect(outcomes.filter((outcome) => outcome.refused === null)).toHaveLength(300);
    expect(outcomes.slice(300).every((outcome) => outcome.refused?.status === 429)).toBe(true);
    const writes = counter.writes;
    const refused = limit.take('10.0.0.2', at);
    expect(refused).not.toBeInstanceOf(Promise);
    expect(counter.writes).toBe(writes);
  });
});

describe('clientAddress', () => {
  const request = (forwarded: string | string[] | undefined) =>
    ({ socket: { remoteAddress: '127.0.0.1' }, headers: { 'x-forwarded-for': forwarded } }) as unknown as IncomingMessage;

  test.each([
    [undefined, 1, '127.0.0.1'],
    ['', 1, '127.0.0.1'],
    ['203.0.113.7', 0, '127.0.0.1'],
    ['203.0.113.7', 1, '203.0.113.7'],
    ['spoofed, 203.0.113.7', 1, '203.0.113.7'],
    ['spoofed, 203.0.113.7 ,10.0.0.9', 2, '203.0.113.7'],
    ['203.0.113.7', 3, '203.0.113.7'],
    [', ,203.0.113.7, ,', 1, '203.0.113.7'],
    [['a, 198.51.100.1', '203.0.113.7'], 2, '198.51.100.1'],
  ])('X-Forwarded-For %j with %d trusted hops: %s', (forwarded, hops, expected) => {
    expect(clientAddress(request(forwarded), hops)).toBe(expected);
  });
});

describe('trustedHopValue', () => {
  test.each([
    [undefined, 1, null],
    ['https', 0, null],
    ['https', 1, 'https'],
    ['http, https', 1, 'https'],
    ['evil.example, shop.example ,lb.internal', 2, 'shop.example'],
    ['443', 3, '443'],
    [' , ', 1, null],
    [['http', 'https'], 1, 'https'],
  ])('%j with %d trusted hops: %j', (header, hops, expected) => {
    expect(trustedHopValue(header, hops)).toBe(expected);
  });
});

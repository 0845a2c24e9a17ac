import { IANAZone } from 'luxon';

/**
 * Wall clock ↔ UTC in an IANA zone without building a luxon DateTime per instant (≈ 80 µs for a
 * wall-clock lookup, ≈ 6 µs to read one back — a month of 5-minute slots made a public slots
 * query cost tens of milliseconds of CPU). The zone's offset comes from luxon's `IANAZone`
 * (tz data through Intl); everything else is integer arithmetic on milliseconds.
 *
 * It rests on one fact of the tz database: a zone changes its offset at most once within any
 * 24 hours. So when the offset is the same at both ends of a 24-hour window, it is that offset
 * throughout.
 */

const MINUTE = 60_000;
const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** Offsets of whole UTC days (hours), per zone; bounded so that nothing grows without limit. */
const MAX_MEMO_PERIODS = 50_000;

export interface LocalDay {
  /** YYYY-MM-DD. */
  date: string;
  /** 0 = monday … 6 = sunday. */
  weekdayIndex: number;
  /**
   * The instant of the day's local midnight when the offset is the same at the day's start and
   * end (an ordinary day: wall-clock minute m is `startMs + m minutes`, each exactly once); null
   * on a day whose offset changes (clocks forward or back), which needs the full tz rules.
   */
  startMs: number | null;
}

const pad = (n: number) => String(n).padStart(2, '0');
/** HH:MM of minutes past midnight. */
export const clockTime = (minutes: number) => `${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;

/** YYYY-MM-DD of a "UTC" date that stands for a local one. */
function isoDate(asUtc: Date): string {
  return `${asUtc.getUTCFullYear()}-${pad(asUtc.getUTCMonth() + 1)}-${pad(asUtc.getUTCDate())}`;
}

export class ZoneClock {
  private readonly zone: IANAZone;
  /**
   * UTC day (and, on a day the offset changes, UTC hour) number → the offset in minutes it has
   * throughout, or null when it changes within it.
   */
  private readonly dayOffsets = new Map<number, number | null>();
  private readonly hourOffsets = new Map<number, number | null>();

  constructor(name: string) {
    this.zone = IANAZone.create(name);
  }

  /** The zone's UTC offset in minutes at an instant (exact, also on a day it changes). */
  offsetAt(ms: number): number {
    return this.steadyOffset(this.dayOffsets, DAY_MS, ms) ?? this.steadyOffset(this.hourOffsets, HOUR_MS, ms) ?? this.zone.offset(ms);
  }

  /** The offset of the whole `span`-long UTC period around `ms`, when it does not change in it. */
  private steadyOffset(memo: Map<number, number | null>, span: number, ms: number): number | null {
    const period = Math.floor(ms / span);
    let offset = memo.get(period);
    if (offset === undefined) {
      const start = this.zone.offset(period * span);
      offset = start === this.zone.offset((period + 1) * span) ? start : null;
      if (memo.size >= MAX_MEMO_PERIODS) memo.clear();
      memo.set(period, offset);
    }
    return offset;
  }

  /** How an instant reads on the zone's wall clock: its local date and HH:MM. */
  wallOf(ms: number): { date: string; time: string } {
    const local = new Date(ms + this.offsetAt(ms) * MINUTE);
    return { date: isoDate(local), time: `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}` };
  }

  /** The local day of `date` (YYYY-MM-DD), `days` later. */
  localDay(date: string, days = 0): LocalDay {
    const asUtc = new Date(Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10)) + days));
    return { date: isoDate(asUtc), weekdayIndex: (asUtc.getUTCDay() + 6) % 7, startMs: this.ordinaryMidnight(asUtc.getTime()) };
  }

  /**
   * Local midnight of the day whose midnight-as-UTC is `base`, when the day is ordinary: its
   * midnight exists once and the offset is the same 24 hours later. Null otherwise (the caller
   * then uses the full tz rules for that day).
   */
  private ordinaryMidnight(base: number): number | null {
    let offset = this.offsetAt(base);
    let midnight = base - offset * MINUTE;
    if (this.offsetAt(midnight) !== offset) {
      // `base` itself was on the other side of a change near midnight: try the offset found there.
      offset = this.offsetAt(midnight);
      midnight = base - offset * MINUTE;
      if (this.offsetAt(midnight) !== offset) return null;
    }
    // The offset an instant before midnight matters too: when it differs, the clocks went back
    // at midnight and the day's first wall-clock minutes may have occurred already.
    if (this.offsetAt(midnight - 1) !== offset) return null;
    return this.offsetAt(midnight + DAY_MS) === offset ? midnight : null;
  }
}

const clocks = new Map<string, ZoneClock>();

/** One clock per zone (its memo of offsets is a fact about the zone, valid as long as the process). */
export function zoneClock(zone: string): ZoneClock {
  let clock = clocks.get(zone);
  if (!clock) {
    clock = new ZoneClock(zone);
    clocks.set(zone, clock);
  }
  return clock;
}

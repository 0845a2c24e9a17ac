// Places: one counter per slot (`<consultation>|<ISO start>`) and per local day
// (`<consultation>|<date>`). Taking is one guarded upsert in `db/place.repository.ts`: the rule
// below is its filter (`booked ≤ capacity − places`), never a read followed by a write.

/** The most a counter may hold before a booking of `places` still fits; null when it never fits. */
export function bookedAtMost(capacity: number, places: number): number | null {
  // A capacity missing from an old record (NaN) fits nobody: no filter `booked <= NaN` reaches the database.
  if (!Number.isFinite(capacity) || !Number.isFinite(places)) return null;
  return places > capacity ? null : capacity - places;
}

/** Whether `places` more fit a counter holding `booked` of `capacity` (not closed). */
export function fits(booked: number, capacity: number, places: number, closed = false): boolean {
  const most = bookedAtMost(capacity, places);
  return !closed && most !== null && booked <= most;
}

/**
 * What the trusted proxy hops wrote in a list header (`X-Forwarded-For`, `-Proto`,
 * `-Port`; each hop appends): the `hops`-th non-empty entry from the right, or the leftmost when
 * there are fewer; null when the header has none (or no hop is trusted). Entries further left
 * are the client's own and never taken. Read in place, without splitting the header into arrays.
 */
export function trustedHopValue(header: string | string[] | undefined, hops: number): string | null {
  if (hops === 0 || header === undefined) return null;
  const list = Array.isArray(header) ? header.join(',') : header;
  let found: string | null = null;
  let taken = 0;
  for (let end = list.length; taken < hops && end > 0;) {
    const comma = list.lastIndexOf(',', end - 1);
    const part = list.slice(comma + 1, end).trim();
    if (part) {
      found = part;
      taken += 1;
    }
    end = comma;
  }
  return found;
}

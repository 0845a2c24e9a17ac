import type { LedgerEntry } from './records';

/** The last link of a wallet's chain as the next entry reads it. */
export interface ChainHead {
  seq: number;
  availableAfterMinor: number;
  heldAfterMinor: number;
  postedAt: Date;
}

/** What an entry carries as a link of its wallet's chain (README "Statement"). */
export interface ChainLink {
  seq: number;
  chainKey: string;
  availableAfterMinor: number;
  heldAfterMinor: number;
  postedAt: Date;
}

/** The chain's key of place `seq` in a wallet: unique, so one entry only ever takes a place. */
export const chainKeyOf = (walletId: string, seq: number) => `${walletId}:${seq}`;

/**
 * The head a wallet's chain starts from when none of its entries is numbered yet: place 0,
 * with the balances its entries written before the chain sum to.
 */
export const genesisHead = (availableMinor: number, heldMinor: number): ChainHead => ({
  seq: 0,
  availableAfterMinor: availableMinor,
  heldAfterMinor: heldMinor,
  postedAt: new Date(0),
});

/**
 * The entry written next after `head`: the next place, the balances after it (the head's plus
 * its deltas), and a time never before the head's, so `postedAt` grows with `seq`.
 */
export function nextLink(
  entry: Pick<LedgerEntry, 'walletId' | 'availableDeltaMinor' | 'heldDeltaMinor'>,
  head: ChainHead,
  now: Date,
): ChainLink {
  const seq = head.seq + 1;
  return {
    seq,
    chainKey: chainKeyOf(entry.walletId, seq),
    availableAfterMinor: head.availableAfterMinor + entry.availableDeltaMinor,
    heldAfterMinor: head.heldAfterMinor + entry.heldDeltaMinor,
    postedAt: now.getTime() > head.postedAt.getTime() ? now : head.postedAt,
  };
}

/**
 * Numbers a wallet's entries written before the chain, oldest first: the newest gets place 0 and
 * the ones before it −1, −2, …, each with the balances summed up to it, so they sit below the
 * chain whatever it already holds and end on the balances it starts from.
 */
export function backfilledLinks(entries: readonly LedgerEntry[]): Array<{ id: string } & ChainLink> {
  let available = 0;
  let held = 0;
  return entries.map((entry, index) => {
    available += entry.availableDeltaMinor;
    held += entry.heldDeltaMinor;
    const seq = index - (entries.length - 1);
    return {
      id: entry.id,
      seq,
      chainKey: chainKeyOf(entry.walletId, seq),
      availableAfterMinor: available,
      heldAfterMinor: held,
      postedAt: new Date(entry.createdAt),
    };
  });
}

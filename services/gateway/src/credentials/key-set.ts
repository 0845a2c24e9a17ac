import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Unauthenticated } from '@mkt/kit/domain';
import type { AccessKeys } from '@mkt/kit/http';
import type { Logger } from '@mkt/kit/logger';

/** A key of the set: its id (`kid`), the private key it signs with, and its public half. */
export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicPem: string;
  jwk: Record<string, unknown>;
}

/** The keys published (current, next, previous) and the one access tokens are signed with now. */
export interface KeySetSnapshot {
  current: SigningKey;
  keys: ReadonlyMap<string, SigningKey>;
  /** Digest of the files read, to tell a change (never the key material itself). */
  version: string;
}

export const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** The file of a key directory that names the current key's id. */
export const CURRENT_FILE = 'current';

function signingKey(kid: string, privatePem: string): SigningKey {
  if (!KEY_ID.test(kid)) throw new Error(`key id "${kid}": letters, digits, _ and - only (at most 64)`);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(privatePem);
  } catch {
    throw new Error(`key ${kid}: not a PEM private key`);
  }
  if (privateKey.asymmetricKeyType !== 'rsa' || (privateKey.asymmetricKeyDetails?.modulusLength ?? 0) < 2048)
    throw new Error(`key ${kid}: an RSA key of at least 2048 bits is needed (RS256)`);
  const publicKey = createPublicKey(privateKey);
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
  return { kid, privateKey, publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(), jwk };
}

/** The one key of `JWT_PRIVATE_KEY` / `JWT_KEY_ID` (local runs): current, and alone in the set. */
export function singleKeySet(privatePem: string, kid: string): KeySetSnapshot {
  const key = signingKey(kid, privatePem);
  return { current: key, keys: new Map([[kid, key]]), version: createHash('sha256').update(privatePem).digest('hex') };
}

/**
 * The key set of a directory (a mounted Kubernetes Secret): every `<kid>.pem` is a PKCS#8 or
 * PKCS#1 RSA private key, published in the JWKS; the file `current` holds the id of the key
 * that signs. Throws when `current` is missing or names no key of the directory, or a key does
 * not parse: a set that cannot sign is never taken.
 */
export function readKeyDirectory(dir: string): KeySetSnapshot {
  const digest = createHash('sha256');
  const currentId = readFileSync(join(dir, CURRENT_FILE), 'utf8').trim();
  digest.update(`current:${currentId}\n`);
  const keys = new Map<string, SigningKey>();
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith('.pem') || name.startsWith('.')) continue;
    const pem = readFileSync(join(dir, name), 'utf8');
    digest.update(`${name}:${pem}\n`);
    const kid = name.slice(0, -'.pem'.length);
    keys.set(kid, signingKey(kid, pem));
  }
  const current = keys.get(currentId);
  if (!current) throw new Error(`${CURRENT_FILE} names "${currentId}", which has no ${currentId}.pem in the key directory`);
  return { current, keys, version: digest.digest('hex') };
}

/**
 * The gateway's signing keys. Tokens are signed with the current key; the JWKS publishes every
 * key of the set; the gateway's own token checks take any key of the set by `kid` (a token
 * without one only while the set has one key). With a `reload` source the set is read again
 * every `reloadMs`: a change (a key added, promoted to current, removed) is taken without a
 * restart; a set that does not read (a half-written Secret, a bad PEM) is refused and the
 * last good one kept.
 */
export class SigningKeySet implements AccessKeys {
  private snapshot: KeySetSnapshot;

  constructor(
    initial: KeySetSnapshot,
    private readonly log: Logger,
    private readonly reload?: { read: () => KeySetSnapshot; everyMs: number },
  ) {
    this.snapshot = initial;
  }

  current(): SigningKey {
    return this.snapshot.current;
  }

  jwks(): { keys: Array<Record<string, unknown>> } {
    return { keys: [...this.snapshot.keys.values()].map((key) => key.jwk) };
  }

  async keyFor(kid: string | undefined): Promise<string> {
    const { keys } = this.snapshot;
    const key = kid === undefined ? (keys.size === 1 ? [...keys.values()][0] : undefined) : keys.get(kid);
    if (!key) throw new Unauthenticated('The access token is not valid');
    return key.publicPem;
  }

  /** Reads the source again; answers whether the set changed. Throws (keeping the set) when it does not read. */
  refresh(): boolean {
    if (!this.reload) return false;
    const next = this.reload.read();
    if (next.version === this.snapshot.version) return false;
    const before = this.snapshot;
    this.snapshot = next;
    this.log.info(
      { current: next.current.kid, keys: [...next.keys.keys()], previousCurrent: before.current.kid },
      'signing key set changed',
    );
    return true;
  }

  start(): () => void {
    if (!this.reload) return () => undefined;
    const timer = setInterval(() => {
      try {
        this.refresh();
      } catch (err) {
        this.log.error({ err }, 'signing key set does not read; keeping the last good one');
      }
    }, this.reload.everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }
}

import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { verify as bcryptVerify } from '@node-rs/bcrypt';
import { PasswordHashingBusy } from '../domain/errors';

export interface PasswordSettings {
  /** Argon2id memory in KiB and passes (OWASP: 19 MiB, 2 passes). */
  memoryKib: number;
  timeCost: number;
  /** Hashes running at once; below libuv's thread pool (4) so DNS and file work keep a thread. */
  concurrency: number;
  /** Hashes waiting for a slot; past that a login or registration is refused with 503. */
  maxWaiting: number;
}

/**
 * Argon2id from a native module: the work runs on libuv's thread pool, never on the event loop,
 * so proxied traffic keeps flowing while logins are hammered. At most `concurrency` hashes run
 * at once (each takes `memoryKib` of memory), the rest wait in a bounded queue. Hashes made by
 * the former bcrypt implementation (`$2a$`/`$2b$`) are still verified (natively too) and
 * replaced after the next successful login (`needsRehash`).
 */
export class PasswordHasher {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly params: string;

  constructor(private readonly settings: PasswordSettings) {
    this.params = `m=${settings.memoryKib},t=${settings.timeCost},p=1`;
  }

  hash(password: string): Promise<string> {
    return this.bounded(() =>
      argon2Hash(password, { memoryCost: this.settings.memoryKib, timeCost: this.settings.timeCost, parallelism: 1 }),
    );
  }

  /** False for a wrong password and for a hash in no format we know. */
  verify(stored: string, password: string): Promise<boolean> {
    if (isBcrypt(stored)) return this.bounded(() => bcryptVerify(password, stored));
    if (stored.startsWith('$argon2')) return this.bounded(() => argon2Verify(stored, password));
    return Promise.resolve(false);
  }

  /** A hash of another algorithm or with other parameters than the current ones. */
  needsRehash(stored: string): boolean {
    return !stored.startsWith(`$argon2id$v=19$${this.params}$`);
  }

  /** Hashes running now and waiting (tests and metrics). */
  load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  private async bounded<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.settings.concurrency) {
      if (this.waiting.length >= this.settings.maxWaiting) throw new PasswordHashingBusy();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await work();
    } finally {
      // Hand the slot straight to the next waiter (running stays the same), or free it.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}

function isBcrypt(stored: string): boolean {
  return /^\$2[abxy]\$\d{2}\$/.test(stored);
}

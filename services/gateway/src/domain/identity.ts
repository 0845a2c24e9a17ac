import { randomUUID } from 'node:crypto';
import { makeEvent, newReference, type AuthSession, type AuthUser, type LoginBody, type RegisterBody, type Role } from '@mkt/contracts';
import { isDuplicateKey, NotFound, type Logger, type OutboxRelay } from '@mkt/kit';
import { RefreshToken } from '../db/refresh-token.model';
import { User, type UserDoc } from '../db/user.model';
import { EmailTaken, InvalidCredentials, InvalidRefreshToken } from './identity.errors';
import type { LoginThrottle } from './login-throttle';
import type { PasswordHasher } from './passwords';
import { hashToken, newRefreshToken, signAccessToken, type SigningKeys } from './tokens';

export interface IdentitySettings {
  keys: SigningKeys;
  refreshTtlDays: number;
  referencePrefix: string;
  passwords: PasswordHasher;
  throttle: LoginThrottle;
}

const DAY_MS = 86_400_000;

export function toAuthUser(user: Pick<UserDoc, '_id' | 'referenceId' | 'email' | 'fullName' | 'role'>): AuthUser {
  return { id: user._id, referenceId: user.referenceId, email: user.email, fullName: user.fullName, role: user.role };
}

/** Registration, login, refresh with rotation and reuse detection, logout. */
export class Identity {
  // Verified when the email is unknown, so both failures take the same time.
  private dummyHash: Promise<string> | undefined;

  constructor(
    private readonly settings: IdentitySettings,
    private readonly outbox: Pick<OutboxRelay, 'flush'>,
    private readonly log: Logger,
  ) {}

  async register(body: RegisterBody, correlationId: string): Promise<AuthSession> {
    const user = await this.createUser(body.email, body.password, body.fullName, body.role, correlationId);
    this.log.info({ userId: user._id, role: user.role }, 'user registered');
    return this.startSession(user);
  }

  /** Signs in; `address` is the client's address key, for the failed-login throttle. */
  async login(body: LoginBody, address: string): Promise<AuthSession> {
    const { passwords, throttle } = this.settings;
    const ticket = await throttle.begin(body.email, address);
    const user = await User.findOne({ email: body.email }).lean<UserDoc>();
    this.dummyHash ??= passwords.hash(randomUUID()).catch((err: unknown) => {
      this.dummyHash = undefined;
      throw err;
    });
    const matches = await passwords.verify(user?.passwordHash ?? (await this.dummyHash), body.password);
    if (!user || !matches) throw new InvalidCredentials();
    await throttle.succeeded(ticket);
    if (passwords.needsRehash(user.passwordHash)) await this.rehash(user, body.password);
    return this.startSession(user);
  }

  /** Uses a refresh token once and issues the next one of its family. */
  async refresh(token: string): Promise<AuthSession> {
    const tokenHash = hashToken(token);
    const now = new Date();
    const used = await RefreshToken.findOneAndUpdate(
      { tokenHash, usedAt: null, revokedAt: null, expiresAt: { $gt: now } },
      { $set: { usedAt: now } },
      { new: true },
    ).lean();
    if (!used) {
      await this.revokeIfReused(tokenHash);
      throw new InvalidRefreshToken();
    }
    const user = await User.findById(used.userId).lean<UserDoc>();
    if (!user) throw new InvalidRefreshToken();
    return this.issue(user, used.familyId);
  }

  /** Ends the session a refresh token belongs to. Unknown tokens are ignored. */
  async logout(token: string): Promise<void> {
    const found = await RefreshToken.findOne({ tokenHash: hashToken(token) }).lean();
    if (found) await RefreshToken.updateMany({ familyId: found.familyId, revokedAt: null }, { $set: { revokedAt: new Date() } });
  }

  async me(userId: string): Promise<AuthUser> {
    const user = await User.findById(userId).lean<UserDoc>();
    if (!user) throw new NotFound('User');
    return toAuthUser(user);
  }

  /** Creates the admin from configuration when no account has that email yet. */
  async seedAdmin(email: string, password: string, fullName: string): Promise<void> {
    const normalized = email.trim().toLowerCase();
    if (await User.exists({ email: normalized })) return;
    try {
      await this.createUser(normalized, password, fullName, 'admin', randomUUID());
      this.log.info({ email: normalized }, 'admin seeded');
    } catch (err) {
      if (!(err instanceof EmailTaken)) throw err;
    }
  }

  /** Deletes refresh tokens past their expiry (the development server enforces no TTL index). */
  async deleteExpiredRefreshTokens(): Promise<number> {
    const { deletedCount } = await RefreshToken.deleteMany({ expiresAt: { $lt: new Date() } });
    return deletedCount;
  }

  /**
   * Replaces a hash of the former algorithm (bcrypt) or of older parameters with the current
   * one, now that we know the password. Only if nobody changed it meanwhile; a failure is
   * logged and the login goes on (the next one tries again).
   */
  private async rehash(user: UserDoc, password: string): Promise<void> {
    try {
      const passwordHash = await this.settings.passwords.hash(password);
      await User.updateOne({ _id: user._id, passwordHash: user.passwordHash }, { $set: { passwordHash } });
      this.log.info({ userId: user._id }, 'password hash upgraded');
    } catch (err) {
      this.log.warn({ userId: user._id, err }, 'password hash upgrade failed');
    }
  }

  private async createUser(email: string, password: string, fullName: string, role: Role, correlationId: string): Promise<UserDoc> {
    const passwordHash = await this.settings.passwords.hash(password);
    const id = randomUUID();
    const referenceId = newReference('USR', this.settings.referencePrefix);
    const event = makeEvent(
      'identity.user.registered',
      { userId: id, referenceId, role, fullName, email },
      { source: 'gateway', correlationId },
    );
    try {
      const user = await User.create({ _id: id, referenceId, email, passwordHash, fullName, role, pendingEvents: [event] });
      void this.outbox.flush(User, user._id);
      return user.toObject();
    } catch (err) {
      if (isDuplicateKey(err)) throw new EmailTaken();
      throw err;
    }
  }

  private async revokeIfReused(tokenHash: string): Promise<void> {
    const known = await RefreshToken.findOne({ tokenHash }).lean();
    if (!known?.usedAt) return;
    this.log.warn({ userId: known.userId, familyId: known.familyId }, 'refresh token reused; session revoked');
    await RefreshToken.updateMany({ familyId: known.familyId, revokedAt: null }, { $set: { revokedAt: new Date() } });
  }

  private startSession(user: UserDoc): Promise<AuthSession> {
    return this.issue(user, randomUUID());
  }

  private async issue(user: UserDoc, familyId: string): Promise<AuthSession> {
    const refreshToken = newRefreshToken();
    await RefreshToken.create({
      _id: randomUUID(),
      tokenHash: hashToken(refreshToken),
      familyId,
      userId: user._id,
      expiresAt: new Date(Date.now() + this.settings.refreshTtlDays * DAY_MS),
    });
    const accessToken = signAccessToken(
      { sub: user._id, ref: user.referenceId, role: user.role, email: user.email, name: user.fullName },
      this.settings.keys,
    );
    return { user: toAuthUser(user), accessToken, refreshToken, tokenType: 'Bearer', expiresIn: this.settings.keys.accessTtlSeconds };
  }
}

import { randomUUID } from 'node:crypto';
import {
  makeEvent,
  newReference,
  type AuthSession,
  type AuthUser,
  type LoginBody,
  type RegisterBody,
  type Role,
} from '@mkt/contracts/gateway';
import { isDuplicateKey, NotFound } from '@mkt/kit/domain';
import type { Logger } from '@mkt/kit/logger';
import type { RefreshTokenRepository } from '../db/refresh-token.repository';
import type { UserDoc } from '../domain/records';
import type { UserRepository } from '../db/user.repository';
import type { PasswordHasher } from '../credentials/passwords';
import { issueDeviceCookie, readDeviceCookie, type DeviceCookieSettings } from '../credentials/device-cookie';
import { hashToken, newRefreshToken, signAccessToken, type SigningKeys } from '../credentials/tokens';
import {
  accessClaimsOf,
  adminEmail,
  newUser,
  onUnusableRefreshToken,
  refreshExpiry,
  toAuthUser,
  usableRefreshToken,
} from '../domain/identity';
import { EmailTaken, InvalidCredentials, InvalidRefreshToken } from '../domain/errors';
import type { LoginThrottle } from './login-throttle.use-cases';

export interface IdentitySettings {
  keys: SigningKeys;
  refreshTtlDays: number;
  referencePrefix: string;
  passwords: PasswordHasher;
  throttle: LoginThrottle;
  /** The known-device cookie issued at each successful sign-in. */
  devices: DeviceCookieSettings;
}

export interface IdentityRepositories {
  users: UserRepository;
  refreshTokens: RefreshTokenRepository;
}

/** Registration, login, refresh with rotation and reuse detection, logout. */
export class Identity {
  // Verified when the email is unknown, so both failures take the same time.
  private dummyHash: Promise<string> | undefined;

  constructor(
    private readonly settings: IdentitySettings,
    private readonly repos: IdentityRepositories,
    private readonly log: Logger,
  ) {}

  async register(body: RegisterBody, correlationId: string): Promise<AuthSession> {
    const user = await this.createUser(body.email, body.password, body.fullName, body.role, correlationId);
    this.log.info({ userId: user._id, role: user.role }, 'user registered');
    return this.startSession(user);
  }

  /**
   * Signs in; `address` is the client's address key and `deviceCookie` the known-device cookie
   * the client sent, if any, for the failed-login throttle. A success answers the session and
   * the device cookie to set (the same device id when the client had one for this account).
   */
  async login(body: LoginBody, address: string, deviceCookie?: string): Promise<{ session: AuthSession; deviceCookie: string }> {
    const { passwords, throttle, devices } = this.settings;
    const device = readDeviceCookie(deviceCookie, devices, new Date());
    const ticket = await throttle.begin(body.email, address, device);
    const user = await this.repos.users.findByEmail(body.email);
    this.dummyHash ??= passwords.hash(randomUUID()).catch((err: unknown) => {
      this.dummyHash = undefined;
      throw err;
    });
    const matches = await passwords.verify(user?.passwordHash ?? (await this.dummyHash), body.password);
    if (!user || !matches) throw new InvalidCredentials();
    await throttle.succeeded(ticket);
    if (passwords.needsRehash(user.passwordHash)) await this.rehash(user, body.password);
    const session = await this.startSession(user);
    return { session, deviceCookie: issueDeviceCookie(ticket.accountKey, devices, new Date(), ticket.deviceId) };
  }

  /** Uses a refresh token once and issues the next one of its family. */
  async refresh(token: string): Promise<AuthSession> {
    const tokenHash = hashToken(token);
    const now = new Date();
    const used = await this.repos.refreshTokens.useOnce(tokenHash, usableRefreshToken(now), now);
    if (!used) {
      const decision = onUnusableRefreshToken(await this.repos.refreshTokens.findByHash(tokenHash));
      if (decision !== 'refuse') {
        this.log.warn({ userId: decision.userId, familyId: decision.revokeFamily }, 'refresh token reused; session revoked');
        await this.repos.refreshTokens.revokeFamily(decision.revokeFamily, new Date());
      }
      throw new InvalidRefreshToken();
    }
    const user = await this.repos.users.findById(used.userId);
    if (!user) throw new InvalidRefreshToken();
    return this.issue(user, used.familyId);
  }

  /** Ends the session a refresh token belongs to. Unknown tokens are ignored. */
  async logout(token: string): Promise<void> {
    const found = await this.repos.refreshTokens.findByHash(hashToken(token));
    if (found) await this.repos.refreshTokens.revokeFamily(found.familyId, new Date());
  }

  async me(userId: string): Promise<AuthUser> {
    const user = await this.repos.users.findById(userId);
    if (!user) throw new NotFound('User');
    return toAuthUser(user);
  }

  /** Creates the admin from configuration when no account has that email yet. */
  async seedAdmin(email: string, password: string, fullName: string): Promise<void> {
    const normalized = adminEmail(email);
    if (await this.repos.users.emailTaken(normalized)) return;
    try {
      await this.createUser(normalized, password, fullName, 'admin', randomUUID());
      this.log.info({ email: normalized }, 'admin seeded');
    } catch (err) {
      if (!(err instanceof EmailTaken)) throw err;
    }
  }

  /** Deletes refresh tokens past their expiry (the development server enforces no TTL index). */
  deleteExpiredRefreshTokens(): Promise<number> {
    return this.repos.refreshTokens.deleteExpired(new Date());
  }

  /**
   * Replaces a hash of the former algorithm (bcrypt) or of older parameters with the current
   * one, now that we know the password. Only if nobody changed it meanwhile; a failure is
   * logged and the login goes on (the next one tries again).
   */
  private async rehash(user: UserDoc, password: string): Promise<void> {
    try {
      await this.repos.users.replaceHash(user, await this.settings.passwords.hash(password));
      this.log.info({ userId: user._id }, 'password hash upgraded');
    } catch (err) {
      this.log.warn({ userId: user._id, err }, 'password hash upgrade failed');
    }
  }

  private async createUser(email: string, password: string, fullName: string, role: Role, correlationId: string): Promise<UserDoc> {
    const passwordHash = await this.settings.passwords.hash(password);
    const made = { id: randomUUID(), referenceId: newReference('USR', this.settings.referencePrefix), passwordHash };
    const { user, emit } = newUser({ email, fullName, role }, made);
    try {
      return await this.repos.users.insert(user, makeEvent(emit.type, emit.data, { source: 'gateway', correlationId }));
    } catch (err) {
      if (isDuplicateKey(err)) throw new EmailTaken();
      throw err;
    }
  }

  private startSession(user: UserDoc): Promise<AuthSession> {
    return this.issue(user, randomUUID());
  }

  private async issue(user: UserDoc, familyId: string): Promise<AuthSession> {
    const refreshToken = newRefreshToken();
    await this.repos.refreshTokens.insert({
      _id: randomUUID(),
      tokenHash: hashToken(refreshToken),
      familyId,
      userId: user._id,
      expiresAt: refreshExpiry(new Date(), this.settings.refreshTtlDays),
    });
    const accessToken = signAccessToken(accessClaimsOf(user), this.settings.keys);
    return { user: toAuthUser(user), accessToken, refreshToken, tokenType: 'Bearer', expiresIn: this.settings.keys.accessTtlSeconds };
  }
}

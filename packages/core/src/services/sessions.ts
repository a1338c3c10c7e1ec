import type { AuthUser, Session, SessionAuthMethod } from '../domain/people.js';
import type { Permission } from '../domain/permissions.js';
import { notFound } from '../errors.js';
import type { AuditService } from './audit.js';
import type { Actor, ServiceDeps } from './context.js';
import { type ListPage, type Paged, paged, pageQuerySchema, storagePage } from './paging.js';
import type { PeopleService } from './people.js';

/** Mirrors `SVC_SESSION_*` (docs/auth/sessions.md). */
export interface SessionSettings {
  /** A session unused this long ends. */
  idleTimeoutMs: number;
  /** A session ends this long after sign-in, however busy. */
  absoluteTimeoutMs: number;
  /** A request from another User-Agent than the sign-in's is not the session's. */
  bindUserAgent: boolean;
}

export const DEFAULT_SESSION_SETTINGS: SessionSettings = Object.freeze({
  idleTimeoutMs: 30 * 60_000,
  absoluteTimeoutMs: 12 * 3_600_000,
  bindUserAgent: true,
});

/** `last_seen_at` is written at most this often per session: one write per minute, not per request. */
const TOUCH_EVERY_MS = 60_000;
const USER_AGENT_MAX = 512;

export interface SessionStart {
  auth_method: SessionAuthMethod;
  provider_id?: string | null;
  oidc_sid?: string | null;
  groups?: readonly string[];
  ip_address?: string | null;
  user_agent?: string | null;
}

/** A request's session, its user and what they may do. */
export interface ActiveSession {
  session: Session;
  user: AuthUser;
  permissions: Set<Permission>;
}

/**
 * Server-side sessions. The browser holds a random 256-bit token; only its SHA-256 is stored,
 * so a database reader cannot sign in as anyone.
 */
export class SessionService {
  readonly settings: SessionSettings;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly people: PeopleService,
    settings: Partial<SessionSettings> = {},
  ) {
    this.settings = { ...DEFAULT_SESSION_SETTINGS, ...settings };
  }

  /** Starts a session for a user who has just proved who they are; answers the cookie token. */
  async start(user: AuthUser, start: SessionStart): Promise<{ session: Session; token: string }> {
    const token = Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
    const now = this.deps.clock.now().getTime();
    const expires = now + this.settings.absoluteTimeoutMs;
    const session = await this.deps.storage.transaction(async (tx) => {
      const created = await tx.sessions.create({
        user_id: user.id,
        tenant_id: user.tenant_id,
        auth_method: start.auth_method,
        provider_id: start.provider_id ?? null,
        oidc_sid: start.oidc_sid ?? null,
        groups: [...(start.groups ?? [])],
        ip_address: start.ip_address ?? null,
        user_agent: start.user_agent?.slice(0, USER_AGENT_MAX) ?? null,
        expires_at: new Date(expires),
        idle_expires_at: new Date(Math.min(expires, now + this.settings.idleTimeoutMs)),
        token_hash: await sessionTokenHash(token),
      });
      await tx.users.update(user.id, { last_login_at: new Date(now) });
      await this.audit.record(
        { type: 'user', id: user.id },
        {
          action: 'login',
          category: 'auth',
          resource_type: 'session',
          resource_id: created.id,
          details: {
            method: start.auth_method,
            provider_id: start.provider_id ?? null,
            ip: start.ip_address ?? null,
          },
        },
        tx,
      );
      return created;
    });
    return { session, token };
  }

  /**
   * The session behind a cookie token, or null: unknown, past its idle or absolute end (then
   * removed), from another User-Agent when bound, or of a deactivated user.
   */
  async resolve(token: string, request: { user_agent?: string | null } = {}): Promise<ActiveSession | null> {
    if (token.length === 0 || token.length > 128) return null;
    const session = await this.deps.storage.sessions.findByTokenHash(await sessionTokenHash(token));
    if (!session) return null;
    const now = this.deps.clock.now();
    if (now >= session.expires_at || now >= session.idle_expires_at) {
      await this.deps.storage.sessions.delete(session.id);
      return null;
    }
    if (
      this.settings.bindUserAgent &&
      (request.user_agent?.slice(0, USER_AGENT_MAX) ?? null) !== session.user_agent
    ) {
      return null;
    }
    const user = await this.deps.storage.users.get(session.user_id);
    if (!user || user.deactivated_at !== null) {
      await this.deps.storage.sessions.deleteForUser(session.user_id);
      return null;
    }
    if (now.getTime() - session.last_seen_at.getTime() >= TOUCH_EVERY_MS) {
      const idle = new Date(
        Math.min(session.expires_at.getTime(), now.getTime() + this.settings.idleTimeoutMs),
      );
      await this.deps.storage.sessions.touch(session.id, now, idle);
      session.last_seen_at = now;
      session.idle_expires_at = idle;
    }
    const permissions = await this.people.permissionsOf(user, session.provider_id, session.groups);
    return { session, user, permissions };
  }

  /** Sessions of one user (`userId`), or of the whole tenant; newest first. */
  async list(tenantId: string, userId: string | undefined, page: ListPage = {}): Promise<Paged<Session>> {
    const window = pageQuerySchema.parse(page);
    return paged(
      await this.deps.storage.sessions.list({
        ...storagePage(window),
        tenant_id: tenantId,
        ...(userId !== undefined ? { user_id: userId } : {}),
      }),
      window,
    );
  }

  /**
   * Ends one session. `ownerId` restricts it to that user's sessions: someone else's session
   * is not_found, so its id leaks nothing.
   */
  async revoke(actor: Actor, tenantId: string, id: string, ownerId?: string): Promise<void> {
    const session = await this.deps.storage.sessions.get(id);
    if (
      !session ||
      session.tenant_id !== tenantId ||
      (ownerId !== undefined && session.user_id !== ownerId)
    ) {
      throw notFound('session', id);
    }
    await this.deps.storage.transaction(async (tx) => {
      await tx.sessions.delete(id);
      await this.audit.record(
        actor,
        {
          action: 'session_revoke',
          category: 'auth',
          resource_type: 'session',
          resource_id: id,
          details: { user_id: session.user_id },
        },
        tx,
      );
    });
  }

  /** Ends every session of the user except `keepId`; answers how many ended. */
  async revokeOthers(actor: Actor, userId: string, keepId: string | undefined): Promise<number> {
    return this.deps.storage.transaction(async (tx) => {
      const ended = await tx.sessions.deleteForUser(userId, keepId);
      await this.audit.record(
        actor,
        {
          action: 'session_revoke_others',
          category: 'auth',
          resource_type: 'user',
          resource_id: userId,
          details: { ended },
        },
        tx,
      );
      return ended;
    });
  }

  /** `POST /auth/logout`: ends the session of the token, if any; answers whether one ended. */
  async logout(token: string): Promise<boolean> {
    if (token.length === 0 || token.length > 128) return false;
    const session = await this.deps.storage.sessions.findByTokenHash(await sessionTokenHash(token));
    if (!session) return false;
    await this.deps.storage.transaction(async (tx) => {
      await tx.sessions.delete(session.id);
      await this.audit.record(
        { type: 'user', id: session.user_id },
        { action: 'logout', category: 'auth', resource_type: 'session', resource_id: session.id },
        tx,
      );
    });
    return true;
  }

  /** Removes sessions past their idle or absolute end (the `SVC_SESSION_GC_INTERVAL` sweep). */
  gc(): Promise<number> {
    return this.deps.storage.sessions.deleteExpired(this.deps.clock.now());
  }
}

/** Lower-case hex SHA-256 of a session token, as stored. */
export async function sessionTokenHash(token: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(token));
  return Buffer.from(digest).toString('hex');
}

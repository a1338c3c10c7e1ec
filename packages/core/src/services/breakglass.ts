import { hashPassword, verifyPassword } from '../crypto/password-hash.js';
import { DEFAULT_TENANT_ID, type Session } from '../domain/people.js';
import { CertwrightError, notFound, validationError } from '../errors.js';
import type { AuditService } from './audit.js';
import type { Actor, ServiceDeps } from './context.js';
import type { SessionService } from './sessions.js';

/** Mirrors `SVC_BREAKGLASS_*` (docs/auth/breakglass.md). */
export interface BreakglassSettings {
  enabled: boolean;
  /** Failed passwords in a row before the actor is locked out. */
  lockoutThreshold: number;
  /** How long a lockout lasts unless an administrator unlocks earlier. */
  lockoutMs: number;
}

export const DEFAULT_BREAKGLASS_SETTINGS: BreakglassSettings = Object.freeze({
  enabled: false,
  lockoutThreshold: 5,
  lockoutMs: 15 * 60_000,
});

/** A credential as the API shows it (6 fields); the hash never leaves storage. */
export interface BreakglassView {
  actor_id: string;
  user_id: string;
  created_at: Date;
  updated_at: Date;
  last_used_at: Date | null;
  locked: boolean;
}

const ACTOR_ID = /^[A-Za-z0-9._@-]{1,255}$/;
const MIN_PASSWORD = 12;
const MAX_PASSWORD = 256;

/**
 * Break-glass local credentials: a way in while the identity provider is down. Failures and
 * lockouts live on the credential's row, so a lockout holds across every instance on the
 * database and across restarts.
 */
export class BreakglassService {
  readonly settings: BreakglassSettings;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly sessions: SessionService,
    settings: Partial<BreakglassSettings> = {},
  ) {
    this.settings = { ...DEFAULT_BREAKGLASS_SETTINGS, ...settings };
  }

  /** Disabled: every break-glass operation is not_found, as if it did not exist. */
  private requireEnabled(): void {
    if (!this.settings.enabled)
      throw new CertwrightError('not_found', 'break-glass credentials are disabled');
  }

  async list(): Promise<BreakglassView[]> {
    this.requireEnabled();
    const all = await this.deps.storage.breakglass.list();
    return all.map((c) => ({
      actor_id: c.actor_id,
      user_id: c.user_id,
      created_at: c.created_at,
      updated_at: c.updated_at,
      last_used_at: c.last_used_at,
      locked: this.isLocked(c.locked_until),
    }));
  }

  /**
   * Sets (or replaces) an actor's password. A new actor becomes a local user with the admin
   * role: break-glass exists to administer the service when single sign-on cannot.
   */
  async setPassword(
    actor: Actor,
    actorId: string,
    password: string,
  ): Promise<{ actor_id: string; created_at: Date }> {
    this.requireEnabled();
    const issues = [];
    if (!ACTOR_ID.test(actorId))
      issues.push({ field: 'actor_id', message: 'letters, digits, . _ @ - (1–255)' });
    if (password.length < MIN_PASSWORD || password.length > MAX_PASSWORD) {
      issues.push({ field: 'password', message: `${MIN_PASSWORD} to ${MAX_PASSWORD} characters` });
    }
    if (issues.length > 0) throw validationError(issues);
    const hash = await hashPassword(password);
    return this.deps.storage.transaction(async (tx) => {
      let user = await tx.users.findBySubject(DEFAULT_TENANT_ID, null, actorId);
      if (!user) {
        user = await tx.users.create({ tenant_id: DEFAULT_TENANT_ID, provider_id: null, subject: actorId });
        await tx.roles.setRolesOf(user.id, ['admin']);
      }
      const credential = await tx.breakglass.set(actorId, user.id, hash);
      await this.audit.record(
        actor,
        {
          action: 'breakglass_password_set',
          category: 'auth',
          resource_type: 'breakglass_credential',
          resource_id: actorId,
        },
        tx,
      );
      return { actor_id: credential.actor_id, created_at: credential.created_at };
    });
  }

  async remove(actor: Actor, actorId: string): Promise<void> {
    this.requireEnabled();
    await this.deps.storage.transaction(async (tx) => {
      await tx.breakglass.delete(actorId);
      await this.audit.record(
        actor,
        {
          action: 'breakglass_credential_delete',
          category: 'auth',
          resource_type: 'breakglass_credential',
          resource_id: actorId,
        },
        tx,
      );
    });
  }

  async unlock(actor: Actor, actorId: string): Promise<void> {
    this.requireEnabled();
    if (!(await this.deps.storage.breakglass.get(actorId))) throw notFound('break-glass credential', actorId);
    await this.deps.storage.breakglass.clearFailures(actorId);
    await this.audit.record(actor, {
      action: 'breakglass_unlock',
      category: 'auth',
      resource_type: 'breakglass_credential',
      resource_id: actorId,
    });
  }

  /**
   * Signs in with a break-glass password: a session, or null for any failure (unknown actor,
   * wrong password, locked out) so the answer tells nothing. An unknown actor costs a password
   * check too.
   */
  async login(
    actorId: string,
    password: string,
    context: { ip_address: string | null; user_agent: string | null },
  ): Promise<{ token: string; session: Session } | null> {
    this.requireEnabled();
    const bounded = actorId.slice(0, 255);
    const credential = ACTOR_ID.test(bounded) ? await this.deps.storage.breakglass.get(bounded) : null;
    const ok = await verifyPassword(password.slice(0, MAX_PASSWORD), credential?.password_hash ?? 'none');
    const refuse = async (reason: string) => {
      await this.audit.record(
        { type: 'anonymous', id: 'anonymous' },
        {
          action: 'breakglass_login_failed',
          category: 'auth',
          resource_type: 'breakglass_credential',
          resource_id: bounded,
          details: { reason, ip: context.ip_address },
        },
      );
      return null;
    };
    if (!credential) return refuse('unknown_actor');
    if (this.isLocked(credential.locked_until)) return refuse('locked');
    if (!ok) {
      const counted = await this.deps.storage.breakglass.recordFailure(bounded, this.deps.clock.now(), {
        windowMs: this.settings.lockoutMs,
        threshold: this.settings.lockoutThreshold,
        lockMs: this.settings.lockoutMs,
      });
      if (counted?.lockedNow) {
        const failures = counted.failures;
        await this.audit.record(
          { type: 'system', id: 'breakglass' },
          {
            action: 'breakglass_lockout',
            category: 'auth',
            resource_type: 'breakglass_credential',
            resource_id: bounded,
            details: { failures },
          },
        );
      }
      return refuse('wrong_password');
    }
    const user = await this.deps.storage.users.get(credential.user_id);
    if (!user || user.deactivated_at !== null) return refuse('user_deactivated');
    await this.deps.storage.breakglass.clearFailures(bounded);
    await this.deps.storage.breakglass.markUsed(bounded, this.deps.clock.now());
    return this.sessions.start(user, { auth_method: 'breakglass', ...context });
  }

  private isLocked(lockedUntil: Date | null): boolean {
    return lockedUntil !== null && lockedUntil.getTime() > this.deps.clock.now().getTime();
  }
}

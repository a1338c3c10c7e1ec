import { randomInt } from 'node:crypto';
import { arch, hostname, platform } from 'node:os';
import { AgentApi, type AgentJob, type HeartbeatFacts, type WorkItem } from './api.js';
import type { AgentConnection } from './config.js';
import { type DeploymentConnector, DeploymentError } from './connector.js';
import { type DiscoveryReporter, scanForCertificates } from './discovery.js';
import { AgentHttpError } from './http.js';
import type { AgentKeyStore } from './keys.js';
import { type AgentLogger, silentAgentLogger } from './logger.js';

export const AGENT_VERSION = '3.0.0';

export interface AgentOptions {
  connection: AgentConnection;
  connectors: readonly DeploymentConnector[];
  /** Where keys generated on this host live; needed for profiles with agent-side keys. */
  keyStore?: AgentKeyStore;
  logger?: AgentLogger;
  /** Mean pause between work polls; each pause is drawn ±20 % around it. Default 30 s. */
  pollIntervalMs?: number;
  /** Pause between heartbeats. Default 60 s. */
  heartbeatIntervalMs?: number;
  /** Longest pause after repeated server errors. Default 5 min. */
  maxBackoffMs?: number;
  /** Facts sent with every heartbeat besides the host's own. */
  facts?: HeartbeatFacts;
  /**
   * Host discovery: paths scanned for certificate files, and where the findings go (by default
   * the server's `POST /api/v1/agents/{id}/discoveries`). Default interval 6 hours.
   */
  discovery?: { paths: readonly string[]; reporter?: DiscoveryReporter; intervalMs?: number };
}

export type StopReason = 'stopped' | 'retired';

export interface AgentStatus {
  agent_id: string;
  state: 'starting' | 'running' | 'backing_off' | 'stopped' | 'retired';
  last_heartbeat_at: string | null;
  last_poll_at: string | null;
  last_error: string | null;
  consecutive_failures: number;
  jobs_completed: number;
  jobs_failed: number;
  csrs_submitted: number;
  connectors: string[];
}

/** Thrown inside the loop when the server says the agent is retired (410). */
class Retired extends Error {}

/**
 * The agent loop: heartbeat, poll for work with jitter, submit CSRs for AwaitingCSR jobs,
 * run Deployment and Validation jobs through the connector of the target's type and report
 * each outcome. Server errors back off exponentially; a 410 ends the loop with `retired`, and
 * `stop()` (SIGTERM in the reference program) ends it after the job in hand.
 */
export class CertwrightAgent {
  readonly api: AgentApi;
  readonly #o: AgentOptions;
  readonly #log: AgentLogger;
  readonly #connectors = new Map<string, DeploymentConnector>();
  /** Fingerprint deployed per target, for verification jobs. */
  readonly #deployed = new Map<string, string>();
  #stopping = false;
  #wake: (() => void) | null = null;
  #lastHeartbeat = 0;
  #lastScan = 0;
  readonly #status: AgentStatus;

  constructor(options: AgentOptions) {
    this.#o = options;
    this.api = new AgentApi(options.connection);
    this.#log = options.logger ?? silentAgentLogger;
    for (const c of options.connectors) this.#connectors.set(c.type, c);
    this.#status = {
      agent_id: options.connection.agentId,
      state: 'starting',
      last_heartbeat_at: null,
      last_poll_at: null,
      last_error: null,
      consecutive_failures: 0,
      jobs_completed: 0,
      jobs_failed: 0,
      csrs_submitted: 0,
      connectors: [...this.#connectors.keys()],
    };
    if (options.connection.insecureSkipVerify) {
      this.#log.warn(
        { variable: 'SVC_SERVER_TLS_INSECURE_SKIP_VERIFY' },
        "the server's TLS certificate is not verified: anyone on the path can impersonate it and receive this agent's key",
      );
    }
  }

  status(): AgentStatus {
    return { ...this.#status, connectors: [...this.#status.connectors] };
  }

  /** Asks the loop to end after the job in hand; `run()` then resolves with `stopped`. */
  stop(): void {
    this.#stopping = true;
    this.#wake?.();
  }

  /** Runs until stopped or retired. */
  async run(): Promise<StopReason> {
    let failures = 0;
    this.#status.state = 'running';
    while (!this.#stopping) {
      let pause = this.#pollPause();
      try {
        await this.tick();
        failures = 0;
        this.#status.state = 'running';
      } catch (error) {
        if (error instanceof Retired) {
          this.#status.state = 'retired';
          this.#log.info({ agent_id: this.#o.connection.agentId }, 'the server retired this agent; stopping');
          return 'retired';
        }
        failures += 1;
        this.#status.state = 'backing_off';
        this.#status.last_error = (error as Error).message;
        pause = this.#backoff(failures);
        this.#log.warn({ err: (error as Error).message, retry_in_ms: pause }, 'talking to the server failed');
      }
      this.#status.consecutive_failures = failures;
      if (!this.#stopping) await this.#sleep(pause);
    }
    this.#status.state = 'stopped';
    return 'stopped';
  }

  /** One round: a heartbeat when due, one work poll and its jobs. */
  async tick(): Promise<void> {
    const now = Date.now();
    if (now - this.#lastHeartbeat >= (this.#o.heartbeatIntervalMs ?? 60_000)) {
      await this.#call(() => this.api.heartbeat(this.#facts()));
      this.#lastHeartbeat = now;
      this.#status.last_heartbeat_at = new Date(now).toISOString();
    }
    const discovery = this.#o.discovery;
    if (discovery && now - this.#lastScan >= (discovery.intervalMs ?? 6 * 3_600_000)) {
      const found = scanForCertificates(discovery.paths);
      await this.#call(() =>
        discovery.reporter
          ? discovery.reporter.report(this.#o.connection.agentId, found)
          : this.api.reportDiscoveries(found),
      );
      this.#lastScan = now;
      this.#log.info({ certificates: found.length }, 'host discovery reported');
    }
    const work = await this.#call(() => this.api.work());
    this.#status.last_poll_at = new Date().toISOString();
    for (const job of work.awaiting_csr) {
      if (this.#stopping) return;
      await this.#submitCsr(job);
    }
    for (const item of work.jobs) {
      // Claimed jobs not started before a stop return to the queue when their lease ends.
      if (this.#stopping) return;
      await this.#runJob(item);
    }
  }

  async #call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof AgentHttpError && error.status === 410) throw new Retired();
      throw error;
    }
  }

  #facts(): HeartbeatFacts {
    const failures =
      this.#status.consecutive_failures > 0 && this.#status.last_error ? [this.#status.last_error] : [];
    return {
      hostname: hostname(),
      os: platform(),
      architecture: arch(),
      version: AGENT_VERSION,
      ...this.#o.facts,
      failures: [...(this.#o.facts?.failures ?? []), ...failures].slice(0, 20),
    };
  }

  async #submitCsr(job: AgentJob): Promise<void> {
    if (!this.#o.keyStore) {
      this.#log.warn({ job_id: job.id }, 'a job awaits a CSR but this agent has no key store configured');
      return;
    }
    const { csrPem, keyId } = await this.#o.keyStore.createCsr(job.certificate_id ?? job.id);
    try {
      await this.#call(() => this.api.submitCsr(job.id, csrPem));
      this.#status.csrs_submitted += 1;
      this.#log.info({ job_id: job.id, certificate_id: job.certificate_id, key_id: keyId }, 'CSR submitted');
    } catch (error) {
      // 409/404: the job moved on (cancelled, another poll answered it); the key stays unused.
      if (error instanceof AgentHttpError && (error.status === 409 || error.status === 404)) {
        this.#log.warn({ job_id: job.id, status: error.status }, 'the job no longer awaits a CSR');
        return;
      }
      throw error;
    }
  }

  async #runJob(item: WorkItem): Promise<void> {
    const { job } = item;
    let result: Record<string, unknown> = {};
    let failure: string | null = null;
    try {
      result = await this.#perform(item);
    } catch (error) {
      failure = error instanceof DeploymentError || error instanceof Error ? error.message : 'the job failed';
    }
    const report = failure
      ? { status: 'Failed' as const, error: failure.slice(0, 4000) }
      : { status: 'Completed' as const, result };
    try {
      await this.#call(() => this.api.report(job.id, report));
    } catch (error) {
      if (error instanceof AgentHttpError && (error.status === 409 || error.status === 404)) {
        this.#log.warn(
          { job_id: job.id, status: error.status },
          'the job ended on the server before the report',
        );
        return;
      }
      throw error;
    }
    if (failure) {
      this.#status.jobs_failed += 1;
      this.#log.warn({ job_id: job.id, job_type: job.type, error: failure }, 'job failed');
    } else {
      this.#status.jobs_completed += 1;
      this.#log.info({ job_id: job.id, job_type: job.type, target_id: job.target_id }, 'job completed');
    }
  }

  async #perform(item: WorkItem): Promise<Record<string, unknown>> {
    const { job, target } = item;
    if (!target) throw new DeploymentError('the job names no target');
    const connector = this.#connectors.get(target.type);
    if (!connector) throw new DeploymentError(`this agent has no connector for target type ${target.type}`);
    if (job.type === 'Deployment') {
      const cert = item.certificate;
      if (!cert) throw new DeploymentError('the deployment carries no certificate');
      const key = cert.private_key_pem ?? this.#o.keyStore?.keyForCertificate(cert.cert_pem) ?? null;
      if (!key)
        throw new DeploymentError(
          'no private key for the certificate: the server sent none and this host holds none',
        );
      const outcome = await connector.deploy(target, {
        versionId: cert.version_id,
        serialNumber: cert.serial_number,
        certPem: cert.cert_pem,
        chainPem: cert.chain_pem,
        privateKeyPem: key,
      });
      this.#deployed.set(target.id, outcome.fingerprint256);
      return {
        version_id: cert.version_id,
        serial_number: cert.serial_number,
        fingerprint_sha256: outcome.fingerprint256,
        files: outcome.files,
        ...(outcome.verification ? { verification: outcome.verification.detail } : {}),
      };
    }
    if (job.type === 'Validation') {
      if (job.payload.kind === 'deployment_verification') {
        const fp = this.#deployed.get(target.id);
        const outcome = await connector.verify(target, fp ? { fingerprint256: fp } : undefined);
        if (!outcome.ok) throw new DeploymentError(outcome.detail);
        return { detail: outcome.detail, served_serial: outcome.servedSerial ?? null };
      }
      return connector.testConnection(target);
    }
    throw new DeploymentError(`job type ${job.type} is not carried out by agents`);
  }

  #pollPause(): number {
    const mean = this.#o.pollIntervalMs ?? 30_000;
    // ±20 %, so a fleet restarted together does not poll in lockstep.
    const spread = Math.max(1, Math.floor(mean * 0.4));
    return Math.max(0, mean - Math.floor(spread / 2) + randomInt(spread));
  }

  #backoff(failures: number): number {
    const max = this.#o.maxBackoffMs ?? 300_000;
    const base = Math.min(max, (this.#o.pollIntervalMs ?? 30_000) * 2 ** Math.min(failures - 1, 10));
    return Math.min(max, Math.floor(base / 2) + randomInt(Math.max(1, Math.floor(base / 2))));
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = () => {
        this.#wake = null;
        done();
      };
    });
  }
}

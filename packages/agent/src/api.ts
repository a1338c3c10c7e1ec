import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AgentConnection } from './config.js';
import type { DiscoveredCertificate } from './discovery.js';
import { AgentHttp } from './http.js';

/** A job as the server sends it; only the fields an agent reads are typed. */
export interface AgentJob {
  id: string;
  type: 'Issuance' | 'Renewal' | 'Deployment' | 'Validation' | string;
  status: string;
  certificate_id: string | null;
  target_id: string | null;
  payload: Record<string, unknown>;
  attempts: number;
  max_attempts: number;
}

export interface WorkTarget {
  id: string;
  name: string;
  type: string;
  config: Record<string, unknown>;
}

/** The version a Deployment installs; no private key when the agent generated it. */
export interface WorkCertificate {
  version_id: string;
  serial_number: string;
  cert_pem: string;
  chain_pem: string | null;
  private_key_pem: string | null;
}

export interface WorkItem {
  job: AgentJob;
  target: WorkTarget | null;
  certificate: WorkCertificate | null;
}

export interface Work {
  jobs: WorkItem[];
  awaiting_csr: AgentJob[];
}

/** Facts a heartbeat reports; `failures` non-empty marks the agent Degraded. */
export interface HeartbeatFacts {
  hostname?: string;
  os?: string;
  architecture?: string;
  ip_address?: string;
  version?: string;
  failures?: string[];
}

export interface JobReport {
  status: 'Running' | 'Completed' | 'Failed';
  error?: string;
  result?: Record<string, unknown>;
}

/** Entries per discovery report; the server accepts up to 1000 certificates in one. */
const DISCOVERY_BATCH = 1000;

/** The agent routes of the server. */
export class AgentApi {
  readonly #http: AgentHttp;
  readonly #id: string;

  constructor(readonly connection: AgentConnection) {
    this.#http = new AgentHttp(connection);
    this.#id = encodeURIComponent(connection.agentId);
  }

  heartbeat(facts: HeartbeatFacts = {}): Promise<Record<string, unknown>> {
    return this.#http.post(`/api/v1/agents/${this.#id}/heartbeat`, facts);
  }

  async work(): Promise<Work> {
    return parseWork(await this.#http.post<unknown>(`/api/v1/agents/${this.#id}/work`));
  }

  report(jobId: string, report: JobReport): Promise<AgentJob> {
    return this.#http.post(`/api/v1/agents/${this.#id}/jobs/${encodeURIComponent(jobId)}/status`, report);
  }

  /**
   * Sends a host discovery scan to `POST /api/v1/agents/{id}/discoveries`, in batches the
   * server accepts; each batch is recorded as one scan. Only paths and certificates are sent.
   */
  async reportDiscoveries(found: readonly DiscoveredCertificate[]): Promise<void> {
    for (let i = 0; i < found.length || i === 0; i += DISCOVERY_BATCH) {
      const certificates = found.slice(i, i + DISCOVERY_BATCH).map((f) => ({ path: f.path, pem: f.pem }));
      await this.#http.post(`/api/v1/agents/${this.#id}/discoveries`, { certificates });
    }
  }

  submitCsr(jobId: string, csrPem: string): Promise<AgentJob> {
    return this.#http.post(`/api/v1/agents/${this.#id}/jobs/${encodeURIComponent(jobId)}/csr`, {
      csr_pem: csrPem,
    });
  }
}

export interface RegistrationInput {
  name: string;
  hostname: string;
  os?: string;
  architecture?: string;
  ip_address?: string;
  version?: string;
}

/**
 * Registers an agent with an administrator's key and writes the one-time agent key to
 * `keyFile` with mode 0600 (the server shows it once and keeps only its hash). Returns the id.
 */
export async function registerAgent(
  connection: Omit<AgentConnection, 'agentId' | 'apiKey'>,
  adminApiKey: string,
  input: RegistrationInput,
  keyFile: string,
): Promise<{ id: string; keyFile: string }> {
  const http = new AgentHttp({ ...connection, agentId: '', apiKey: adminApiKey });
  const created = await http.post<{ id: string; api_key: string }>('/api/v1/agents', input);
  if (typeof created?.id !== 'string' || typeof created.api_key !== 'string') {
    throw new Error('the registration answer carries no agent id and key');
  }
  mkdirSync(dirname(keyFile), { recursive: true, mode: 0o700 });
  writeFileSync(keyFile, `${created.api_key}\n`, { mode: 0o600, flag: 'w' });
  chmodSync(keyFile, 0o600); // an existing file keeps its old mode through writeFileSync
  return { id: created.id, keyFile };
}

/**
 * Checks the shape of a work answer before anything acts on it: a malformed item would
 * otherwise fail half-way through a deployment.
 */
export function parseWork(raw: unknown): Work {
  if (!raw || typeof raw !== 'object') throw new MalformedWorkError('the work answer is not an object');
  const { jobs, awaiting_csr } = raw as { jobs?: unknown; awaiting_csr?: unknown };
  if (!Array.isArray(jobs) || !Array.isArray(awaiting_csr)) {
    throw new MalformedWorkError('the work answer lacks the jobs and awaiting_csr lists');
  }
  return {
    jobs: jobs.map((item, i) => {
      if (!item || typeof item !== 'object') throw new MalformedWorkError(`work item ${i} is not an object`);
      const { job, target, certificate } = item as Record<string, unknown>;
      return {
        job: parseJob(job, `work item ${i}`),
        target: target === null || target === undefined ? null : parseTarget(target, i),
        certificate:
          certificate === null || certificate === undefined ? null : parseCertificate(certificate, i),
      };
    }),
    awaiting_csr: awaiting_csr.map((j, i) => parseJob(j, `awaiting_csr ${i}`)),
  };
}

export class MalformedWorkError extends Error {
  override name = 'MalformedWorkError';
}

const isStr = (v: unknown): v is string => typeof v === 'string';

function parseJob(raw: unknown, where: string): AgentJob {
  if (!raw || typeof raw !== 'object') throw new MalformedWorkError(`${where}: job is not an object`);
  const j = raw as Record<string, unknown>;
  if (!isStr(j.id) || !isStr(j.type) || !isStr(j.status)) {
    throw new MalformedWorkError(`${where}: job lacks id, type or status`);
  }
  const payload = j.payload && typeof j.payload === 'object' ? (j.payload as Record<string, unknown>) : {};
  return {
    id: j.id,
    type: j.type,
    status: j.status,
    certificate_id: isStr(j.certificate_id) ? j.certificate_id : null,
    target_id: isStr(j.target_id) ? j.target_id : null,
    payload,
    attempts: typeof j.attempts === 'number' ? j.attempts : 0,
    max_attempts: typeof j.max_attempts === 'number' ? j.max_attempts : 1,
  };
}

function parseTarget(raw: unknown, i: number): WorkTarget {
  const t = raw as Record<string, unknown>;
  if (!isStr(t.id) || !isStr(t.type) || !t.config || typeof t.config !== 'object') {
    throw new MalformedWorkError(`work item ${i}: target lacks id, type or config`);
  }
  return {
    id: t.id,
    name: isStr(t.name) ? t.name : t.id,
    type: t.type,
    config: t.config as Record<string, unknown>,
  };
}

function parseCertificate(raw: unknown, i: number): WorkCertificate {
  const c = raw as Record<string, unknown>;
  if (!isStr(c.version_id) || !isStr(c.cert_pem) || !c.cert_pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new MalformedWorkError(`work item ${i}: certificate lacks version_id or a PEM certificate`);
  }
  return {
    version_id: c.version_id,
    serial_number: isStr(c.serial_number) ? c.serial_number : '',
    cert_pem: c.cert_pem,
    chain_pem: isStr(c.chain_pem) ? c.chain_pem : null,
    private_key_pem: isStr(c.private_key_pem) ? c.private_key_pem : null,
  };
}

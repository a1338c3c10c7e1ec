import { X509Certificate } from 'node:crypto';
import { request } from 'node:https';
import {
  type ConnectorTarget,
  type DeploymentConnector,
  DeploymentError,
  type DeploymentMaterial,
  type DeploymentOutcome,
  type VerificationOutcome,
} from '../connector.js';
import { fingerprint256 } from '../verify.js';
import { assertKeyMatches } from './file-server.js';

/** Largest API answer read; a TLS Secret is a few kilobytes, the API caps any Secret at 1 MiB. */
const MAX_BODY = 2 * 1024 * 1024;
const TIMEOUT_MS = 30_000;
/** Attempts of a replace that lost a race with another writer (409 Conflict). */
const CONFLICT_ATTEMPTS = 3;

/**
 * The Kubernetes API calls the connector makes, as a port: {@link KubernetesRestClient} talks
 * to an API server over HTTPS; another implementation may wrap a different client.
 */
export interface KubernetesSecretsApi {
  /** The Secret, or null when it does not exist (404). */
  read(namespace: string, name: string): Promise<KubeSecret | null>;
  create(namespace: string, secret: KubeSecret): Promise<KubeSecret>;
  /** Replaces it; `metadata.resourceVersion` makes the write fail with 409 if it changed meanwhile. */
  replace(namespace: string, name: string, secret: KubeSecret): Promise<KubeSecret>;
}

export interface KubeSecret {
  apiVersion?: 'v1';
  kind?: 'Secret';
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  type?: string;
  data?: Record<string, string>;
}

/** A non-2xx answer of the API server. */
export class KubernetesApiError extends Error {
  override name = 'KubernetesApiError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface KubernetesClientOptions {
  /** `https://` origin of the API server, e.g. `https://10.0.0.1:443`. */
  server: string;
  /** Bearer token (a service account token); read per request by the caller's choice. */
  token: () => string;
  /** PEM bundle trusted for the API server's certificate. */
  caPem?: string;
}

/**
 * A minimal REST client for the three Secret calls (core/v1 Secrets). The official
 * `@kubernetes/client-node` is not used: its current release depends on undici 8, which
 * requires Node 22.19, and this package supports Node 20.19.
 */
export class KubernetesRestClient implements KubernetesSecretsApi {
  readonly #base: URL;
  constructor(readonly options: KubernetesClientOptions) {
    const url = new URL(options.server);
    if (url.protocol !== 'https:') throw new Error('the Kubernetes API server must be an https:// URL');
    this.#base = url;
  }

  async read(namespace: string, name: string): Promise<KubeSecret | null> {
    try {
      return await this.#call<KubeSecret>('GET', secretPath(namespace, name));
    } catch (error) {
      if (error instanceof KubernetesApiError && error.status === 404) return null;
      throw error;
    }
  }

  create(namespace: string, secret: KubeSecret): Promise<KubeSecret> {
    return this.#call('POST', secretPath(namespace), secret);
  }

  replace(namespace: string, name: string, secret: KubeSecret): Promise<KubeSecret> {
    return this.#call('PUT', secretPath(namespace, name), secret);
  }

  #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const url = new URL(this.#base.origin + this.#base.pathname.replace(/\/+$/, '') + path);
    return new Promise<T>((resolve, reject) => {
      const req = request(
        url,
        {
          method,
          headers: {
            authorization: `Bearer ${this.options.token()}`,
            accept: 'application/json',
            ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          },
          ...(this.options.caPem ? { ca: this.options.caPem } : {}),
          timeout: TIMEOUT_MS,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_BODY) {
              req.destroy(new Error('the Kubernetes API answer is too large'));
              return;
            }
            chunks.push(c);
          });
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = undefined;
            }
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) {
              if (!parsed || typeof parsed !== 'object') {
                reject(new KubernetesApiError(status, 'the Kubernetes API answered without a JSON object'));
                return;
              }
              resolve(parsed as T);
              return;
            }
            // A Status object (kind: Status) carries the API server's reason; kept short.
            const message =
              parsed && typeof (parsed as { message?: unknown }).message === 'string'
                ? (parsed as { message: string }).message.slice(0, 300)
                : `HTTP ${status}`;
            reject(new KubernetesApiError(status, message));
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('the Kubernetes API did not answer in time')));
      req.on('error', (e) =>
        reject(
          e instanceof KubernetesApiError
            ? e
            : new KubernetesApiError(0, `the Kubernetes API is unreachable: ${e.message}`),
        ),
      );
      req.end(payload);
    });
  }
}

/** RFC 1123 label: what Kubernetes accepts for a namespace. */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** RFC 1123 subdomain: what Kubernetes accepts for a Secret name. */
const SECRET_NAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function secretPath(namespace: string, name?: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets${name ? `/${encodeURIComponent(name)}` : ''}`;
}

export interface KubernetesSecretOptions {
  api: KubernetesSecretsApi;
  /** Namespaces the host allows targets to write to (from the agent's configuration file). */
  allowedNamespaces: readonly string[];
}

const TLS_TYPE = 'kubernetes.io/tls';
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: unknown) => (typeof s === 'string' ? Buffer.from(s, 'base64').toString('utf8') : '');

/**
 * KubernetesSecret: a `kubernetes.io/tls` Secret (`tls.crt` = full chain, `tls.key`) created
 * or replaced through the API. A replace carries the resourceVersion read just before, so a
 * concurrent writer makes it fail with 409 and it is read and tried again. Workloads pick the
 * new Secret up themselves (mounted volumes refresh; ingress controllers watch Secrets).
 */
export class KubernetesSecretConnector implements DeploymentConnector {
  readonly type = 'KubernetesSecret';
  /** What the last deployment replaced, per target, for {@link rollback}. */
  readonly #previous = new Map<string, KubeSecret | null>();

  constructor(readonly options: KubernetesSecretOptions) {}

  #config(target: ConnectorTarget): { namespace: string; name: string } {
    const { namespace, secret_name } = target.config;
    if (typeof namespace !== 'string' || !NAMESPACE.test(namespace))
      throw new DeploymentError('target config namespace must be a Kubernetes namespace name');
    if (typeof secret_name !== 'string' || !SECRET_NAME.test(secret_name))
      throw new DeploymentError('target config secret_name must be a Kubernetes object name');
    if (!this.options.allowedNamespaces.includes(namespace))
      throw new DeploymentError(`target config namespace ${namespace} is not one this agent may write to`);
    return { namespace, name: secret_name };
  }

  #explain(error: unknown, what: string, ns: string): DeploymentError {
    if (error instanceof KubernetesApiError) {
      if (error.status === 403)
        return new DeploymentError(
          `the agent is not allowed to ${what} Secrets in namespace ${ns} (403): ${error.message}`,
        );
      if (error.status === 401)
        return new DeploymentError('the Kubernetes API refused the agent token (401)');
      return new DeploymentError(
        `${what} the Secret failed (${error.status || 'no answer'}): ${error.message}`,
      );
    }
    return new DeploymentError(`${what} the Secret failed: ${(error as Error).message}`);
  }

  async deploy(target: ConnectorTarget, material: DeploymentMaterial): Promise<DeploymentOutcome> {
    const { namespace, name } = this.#config(target);
    assertKeyMatches(material);
    const nl = (s: string) => (s.endsWith('\n') ? s : `${s}\n`);
    const data = {
      'tls.crt': b64(nl(material.certPem) + (material.chainPem ? nl(material.chainPem) : '')),
      'tls.key': b64(nl(material.privateKeyPem)),
    };
    for (let attempt = 1; ; attempt++) {
      let current: KubeSecret | null;
      try {
        current = await this.options.api.read(namespace, name);
      } catch (error) {
        throw this.#explain(error, 'read', namespace);
      }
      if (current && current.type !== undefined && current.type !== TLS_TYPE) {
        throw new DeploymentError(
          `Secret ${namespace}/${name} exists with type ${current.type}; only a ${TLS_TYPE} Secret is replaced`,
        );
      }
      try {
        if (current) {
          await this.options.api.replace(namespace, name, {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { ...current.metadata, name, namespace },
            type: TLS_TYPE,
            data: { ...current.data, ...data },
          });
        } else {
          await this.options.api.create(namespace, {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name, namespace, labels: { 'app.kubernetes.io/managed-by': 'certwright' } },
            type: TLS_TYPE,
            data,
          });
        }
      } catch (error) {
        if (error instanceof KubernetesApiError && error.status === 409 && attempt < CONFLICT_ATTEMPTS)
          continue;
        if (error instanceof KubernetesApiError && error.status === 409)
          throw new DeploymentError(
            `Secret ${namespace}/${name} kept changing under the agent (409 Conflict ${attempt} times); nothing was written`,
          );
        throw this.#explain(error, current ? 'replace' : 'create', namespace);
      }
      this.#previous.set(target.id, current);
      break;
    }
    const fp = fingerprint256(material.certPem);
    const verification = await this.verify(target, { fingerprint256: fp });
    if (!verification.ok) throw new DeploymentError(`verification failed: ${verification.detail}`);
    return { fingerprint256: fp, files: [`secret/${namespace}/${name}`], verification };
  }

  async validate(target: ConnectorTarget): Promise<void> {
    const { namespace, name } = this.#config(target);
    try {
      await this.options.api.read(namespace, name);
    } catch (error) {
      throw this.#explain(error, 'read', namespace);
    }
  }

  /** Puts back the Secret data the last deployment of this process replaced. */
  async rollback(target: ConnectorTarget): Promise<void> {
    const { namespace, name } = this.#config(target);
    if (!this.#previous.has(target.id))
      throw new DeploymentError(
        'no deployment of this agent process replaced the Secret; nothing to roll back',
      );
    const previous = this.#previous.get(target.id);
    if (!previous?.data)
      throw new DeploymentError(
        `Secret ${namespace}/${name} was created by the last deployment; it is left in place`,
      );
    try {
      const current = await this.options.api.read(namespace, name);
      await this.options.api.replace(namespace, name, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { ...(current?.metadata ?? previous.metadata), name, namespace },
        type: TLS_TYPE,
        data: previous.data,
      });
    } catch (error) {
      throw this.#explain(error, 'replace', namespace);
    }
    this.#previous.delete(target.id);
  }

  async testConnection(target: ConnectorTarget): Promise<Record<string, unknown>> {
    const { namespace, name } = this.#config(target);
    let current: KubeSecret | null;
    try {
      current = await this.options.api.read(namespace, name);
    } catch (error) {
      throw this.#explain(error, 'read', namespace);
    }
    return { reachable: true, secret_exists: current !== null };
  }

  async verify(
    target: ConnectorTarget,
    expected?: { fingerprint256?: string },
  ): Promise<VerificationOutcome> {
    const { namespace, name } = this.#config(target);
    let secret: KubeSecret | null;
    try {
      secret = await this.options.api.read(namespace, name);
    } catch (error) {
      return { ok: false, detail: this.#explain(error, 'read', namespace).message };
    }
    if (!secret) return { ok: false, detail: `Secret ${namespace}/${name} does not exist` };
    const leaf = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(
      unb64(secret.data?.['tls.crt']),
    )?.[0];
    if (!leaf) return { ok: false, detail: `Secret ${namespace}/${name} holds no certificate in tls.crt` };
    let fp: string;
    let serial: string;
    try {
      fp = fingerprint256(leaf);
      serial = new X509Certificate(leaf).serialNumber;
    } catch {
      return { ok: false, detail: `Secret ${namespace}/${name} holds a tls.crt that does not parse` };
    }
    if (expected?.fingerprint256 && fp !== expected.fingerprint256) {
      return {
        ok: false,
        detail: `Secret ${namespace}/${name} holds another certificate (serial ${serial})`,
        servedFingerprint256: fp,
        servedSerial: serial,
      };
    }
    return {
      ok: true,
      detail: `Secret ${namespace}/${name} holds the deployed certificate (serial ${serial})`,
      servedFingerprint256: fp,
      servedSerial: serial,
    };
  }
}

/**
 * KubernetesSecret against a fake API server: no cluster can run here, so an HTTPS server on a
 * loopback port answers the core/v1 Secret calls the way the Kubernetes API does (Secret
 * objects, Status objects for 403/404/409, resourceVersion checks on replace). The connector
 * talks to it through the real REST client, over TLS with a bearer token.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConnectorTarget,
  fingerprint256,
  KubernetesRestClient,
  KubernetesSecretConnector,
  type KubeSecret,
} from '../src/index.js';
import { makeServerTls } from './support/server.js';
import { issueLeaf, type TestPki } from './support/servers.js';

const TOKEN = 'sa-token-for-tests';
const secrets = new Map<string, KubeSecret>();
const requests: { method: string; path: string; auth: string | undefined }[] = [];
/** Namespaces where the service account has no rights on Secrets. */
const forbidden = new Set(['kube-system']);
/** Conflicts to answer before a replace succeeds (another writer changing the Secret). */
let conflicts = 0;
let version = 100;

const status = (code: number, reason: string, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  reason,
  code,
});

let server: Server;
let url: string;
let caPem: string;
beforeAll(async () => {
  const tls = makeServerTls();
  caPem = readFileSync(tls.ca, 'utf8');
  server = createServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, (req, res) => {
    let text = '';
    req.on('data', (d) => {
      text += d;
    });
    req.on('end', () => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', auth: req.headers.authorization });
      const send = (code: number, body: unknown) =>
        res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.headers.authorization !== `Bearer ${TOKEN}`)
        return send(401, status(401, 'Unauthorized', 'Unauthorized'));
      const m = /^\/api\/v1\/namespaces\/([^/]+)\/secrets(?:\/([^/?]+))?$/.exec(req.url ?? '');
      if (!m) return send(404, status(404, 'NotFound', 'the server could not find the requested resource'));
      const [, ns, name] = m as unknown as [string, string, string | undefined];
      const verb = { GET: 'get', POST: 'create', PUT: 'update' }[req.method ?? ''] ?? 'unknown';
      if (forbidden.has(ns))
        return send(
          403,
          status(
            403,
            'Forbidden',
            `secrets${name ? ` "${name}"` : ''} is forbidden: User "system:serviceaccount:certwright:agent" cannot ${verb} resource "secrets" in API group "" in the namespace "${ns}"`,
          ),
        );
      const key = `${ns}/${name}`;
      if (req.method === 'GET' && name) {
        const s = secrets.get(key);
        return s ? send(200, s) : send(404, status(404, 'NotFound', `secrets "${name}" not found`));
      }
      const body = JSON.parse(text) as KubeSecret;
      if (req.method === 'POST' && !name) {
        const k = `${ns}/${body.metadata.name}`;
        if (secrets.has(k))
          return send(409, status(409, 'AlreadyExists', `secrets "${body.metadata.name}" already exists`));
        const created = {
          ...body,
          metadata: { ...body.metadata, namespace: ns, resourceVersion: String(++version) },
        };
        secrets.set(k, created);
        return send(201, created);
      }
      if (req.method === 'PUT' && name) {
        const current = secrets.get(key);
        if (!current) return send(404, status(404, 'NotFound', `secrets "${name}" not found`));
        if (conflicts > 0) {
          conflicts -= 1;
          // Another writer got there first: the stored version moves on.
          current.metadata.resourceVersion = String(++version);
        }
        if (body.metadata.resourceVersion !== current.metadata.resourceVersion)
          return send(
            409,
            status(
              409,
              'Conflict',
              `Operation cannot be fulfilled on secrets "${name}": the object has been modified; please apply your changes to the latest version and try again`,
            ),
          );
        const replaced = { ...body, metadata: { ...body.metadata, resourceVersion: String(++version) } };
        secrets.set(key, replaced);
        return send(200, replaced);
      }
      return send(405, status(405, 'MethodNotAllowed', 'the server does not allow this method'));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const material = (p: TestPki, v: string) => ({
  versionId: v,
  serialNumber: '',
  certPem: p.certPem,
  chainPem: p.chainPem,
  privateKeyPem: p.keyPem,
});
const connector = (token = TOKEN) =>
  new KubernetesSecretConnector({
    api: new KubernetesRestClient({ server: url, caPem, token: () => token }),
    allowedNamespaces: ['web', 'kube-system'],
  });
const target = (ns = 'web', name = 'edge-tls'): ConnectorTarget => ({
  id: `tg-${ns}-${name}`,
  name,
  type: 'KubernetesSecret',
  config: { namespace: ns, secret_name: name },
});
const decoded = (key: string, field: string) =>
  Buffer.from(secrets.get(key)?.data?.[field] ?? '', 'base64').toString('utf8');

describe('KubernetesSecret connector against a recorded-API server', () => {
  it('creates a kubernetes.io/tls Secret, then replaces it with the resourceVersion it read', async () => {
    const c = connector();
    const first = issueLeaf();
    const outcome = await c.deploy(target(), material(first, 'v1'));
    expect(outcome.verification?.ok).toBe(true);
    expect(secrets.get('web/edge-tls')?.type).toBe('kubernetes.io/tls');
    expect(decoded('web/edge-tls', 'tls.crt')).toBe(first.certPem + first.chainPem);
    expect(decoded('web/edge-tls', 'tls.key')).toBe(first.keyPem);
    expect(requests.every((r) => r.auth === `Bearer ${TOKEN}`)).toBe(true);

    const second = issueLeaf();
    requests.length = 0;
    await c.deploy(target(), material(second, 'v2'));
    expect(requests.map((r) => r.method)).toEqual(['GET', 'PUT', 'GET']);
    expect(fingerprint256(decoded('web/edge-tls', 'tls.crt'))).toBe(fingerprint256(second.certPem));

    // Rollback puts back what the last deployment replaced.
    await c.rollback(target());
    expect(decoded('web/edge-tls', 'tls.crt')).toBe(first.certPem + first.chainPem);
  });

  it('reads again and retries after a 409 Conflict, and gives up after repeated ones', async () => {
    const c = connector();
    conflicts = 1;
    const leaf = issueLeaf();
    await c.deploy(target(), material(leaf, 'v3'));
    expect(fingerprint256(decoded('web/edge-tls', 'tls.crt'))).toBe(fingerprint256(leaf.certPem));

    const before = secrets.get('web/edge-tls')?.data;
    conflicts = 10;
    await expect(c.deploy(target(), material(issueLeaf(), 'v4'))).rejects.toThrow(
      'Secret web/edge-tls kept changing under the agent (409 Conflict 3 times); nothing was written',
    );
    conflicts = 0;
    expect(secrets.get('web/edge-tls')?.data).toEqual(before);
  });

  it('reports a 403 with the namespace and what was refused, and a bad token as 401', async () => {
    await expect(connector().deploy(target('kube-system'), material(issueLeaf(), 'v'))).rejects.toThrow(
      /the agent is not allowed to read Secrets in namespace kube-system \(403\): .*cannot get resource "secrets"/,
    );
    await expect(connector('wrong').testConnection(target())).rejects.toThrow(
      'the Kubernetes API refused the agent token (401)',
    );
  });

  it('refuses a namespace the host does not allow, a Secret of another type, and a bad name', async () => {
    await expect(connector().deploy(target('payments'), material(issueLeaf(), 'v'))).rejects.toThrow(
      'namespace payments is not one this agent may write to',
    );
    secrets.set('web/opaque', {
      metadata: { name: 'opaque', resourceVersion: '1' },
      type: 'Opaque',
      data: {},
    });
    await expect(connector().deploy(target('web', 'opaque'), material(issueLeaf(), 'v'))).rejects.toThrow(
      'Secret web/opaque exists with type Opaque; only a kubernetes.io/tls Secret is replaced',
    );
    await expect(connector().deploy(target('web', 'Bad_Name'), material(issueLeaf(), 'v'))).rejects.toThrow(
      'secret_name must be a Kubernetes object name',
    );
  });
});

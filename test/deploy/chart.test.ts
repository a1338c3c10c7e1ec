import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

/**
 * The Helm chart as far as this machine can check it without Helm: values.schema.json (which Helm
 * applies to the merged values at every render, lint and install) accepts the defaults and the
 * valid values files and refuses each invalid one where its first line says; the plain manifests
 * under deploy/kubernetes are well-formed, consistent with each other and with the chart's
 * defaults. A real `helm lint` / `helm template` is on the release checklist
 * (docs/operations/kubernetes.md).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHART = join(ROOT, 'deploy/helm/certwright');
const PLAIN = join(ROOT, 'deploy/kubernetes');
const VALUES = fileURLToPath(new URL('./values/', import.meta.url));

type Values = Record<string, unknown>;
const isObject = (v: unknown): v is Values => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Helm's merge of a values file over the chart's: maps merge, anything else replaces, null removes. */
function merge(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === null) delete out[key];
    else if (isObject(value) && isObject(out[key])) out[key] = merge(out[key] as Values, value);
    else out[key] = value;
  }
  return out;
}

const defaults = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as Values;
const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8'));
// An unknown keyword (a typo in the schema) fails; the draft-07 idioms Helm's validator accepts
// (`properties` or `required` in an `if`/`then` without restating the type) do not.
const validate = new Ajv({
  allErrors: true,
  strictSchema: true,
  strictTypes: false,
  strictRequired: false,
}).compile(schema);
const errorsOf = (values: Values): ErrorObject[] => (validate(values) ? [] : [...(validate.errors ?? [])]);
const valuesFiles = (kind: 'valid' | 'invalid') =>
  readdirSync(join(VALUES, kind))
    .filter((f) => f.endsWith('.yaml'))
    .sort();

describe('values.schema.json', () => {
  it('accepts the chart defaults', () => {
    expect(errorsOf(defaults)).toEqual([]);
  });

  it.each(valuesFiles('valid'))('accepts %s', (file) => {
    const over = parse(readFileSync(join(VALUES, 'valid', file), 'utf8')) as Values;
    expect(errorsOf(merge(defaults, over))).toEqual([]);
  });

  it.each(valuesFiles('invalid'))('refuses %s where it says', (file) => {
    const text = readFileSync(join(VALUES, 'invalid', file), 'utf8');
    const where = /^# refused at (\S*)/.exec(text)?.[1];
    expect(where, `${file} starts with "# refused at <path>"`).toBeDefined();
    const errors = errorsOf(merge(defaults, parse(text) as Values));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.map((e) => e.instancePath)).toContain(where?.replace(/:$/, ''));
  });

  it('refuses every auth type but api-key and none', () => {
    for (const type of ['jwt', 'oidc', 'basic', 'API-KEY', '']) {
      const errors = errorsOf(merge(defaults, { auth: { type } }));
      expect(errors.some((e) => e.instancePath === '/auth/type' && e.keyword === 'enum')).toBe(true);
    }
    expect(errorsOf(merge(defaults, { auth: { type: 'none' } }))).toEqual([]);
  });
});

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: any;
}

function plainManifests(): Manifest[] {
  const kustomization = parse(readFileSync(join(PLAIN, 'kustomization.yaml'), 'utf8'));
  const out: Manifest[] = [];
  for (const file of kustomization.resources as string[]) {
    for (const doc of parseAllDocuments(readFileSync(join(PLAIN, file), 'utf8'))) {
      expect(doc.errors, file).toEqual([]);
      out.push(doc.toJS() as Manifest);
    }
  }
  return out;
}

const subset = (small: Record<string, string>, big: Record<string, string> | undefined) =>
  Object.entries(small).every(([k, v]) => big?.[k] === v);

describe('the plain manifests (deploy/kubernetes)', () => {
  const manifests = plainManifests();
  const byKind = new Map(manifests.map((m) => [m.kind, m]));
  const workload = byKind.get('StatefulSet') as Manifest;
  const pod = workload?.spec.template;
  const container = pod?.spec.containers[0];

  it('are the resources the chart renders by default, each well-formed', () => {
    const kustomization = parse(readFileSync(join(PLAIN, 'kustomization.yaml'), 'utf8'));
    for (const file of kustomization.resources as string[]) expect(existsSync(join(PLAIN, file))).toBe(true);
    expect([...byKind.keys()].sort()).toEqual([
      'NetworkPolicy',
      'PodDisruptionBudget',
      'Service',
      'StatefulSet',
    ]);
    for (const m of manifests) {
      expect(m.apiVersion).toMatch(/^(v1|apps\/v1|policy\/v1|networking\.k8s\.io\/v1)$/);
      expect(m.metadata.name).toBe('certwright');
      expect(m.metadata.labels?.['app.kubernetes.io/name']).toBe('certwright');
    }
    // The chart's templates for these kinds are there and enabled by default.
    for (const [kind, template] of [
      ['StatefulSet', 'statefulset.yaml'],
      ['Service', 'service.yaml'],
      ['PodDisruptionBudget', 'pdb.yaml'],
      ['NetworkPolicy', 'networkpolicy.yaml'],
    ] as const) {
      expect(readFileSync(join(CHART, 'templates', template), 'utf8')).toContain(`kind: ${kind}`);
    }
    expect(kustomization.configMapGenerator[0].name).toBe(container.envFrom[0].configMapRef.name);
  });

  it('run one replica of the chart default image on the TLS port, probed on /health and /ready', () => {
    const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8'));
    const server = JSON.parse(readFileSync(join(ROOT, 'packages/server/package.json'), 'utf8'));
    expect(chart.appVersion).toBe(server.version);
    expect(workload.spec.replicas).toBe(1);
    expect(container.image).toBe(`${(defaults.image as Values).repository}:${chart.appVersion}`);
    expect(container.ports).toEqual([{ name: 'https', containerPort: 8443, protocol: 'TCP' }]);
    expect(container.livenessProbe.httpGet).toEqual({ path: '/health', port: 'https', scheme: 'HTTPS' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/health', port: 'https', scheme: 'HTTPS' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/ready', port: 'https', scheme: 'HTTPS' });
    const mounts = new Map(
      container.volumeMounts.map((m: { name: string; mountPath: string }) => [m.name, m.mountPath]),
    );
    const volumes = new Set([
      ...pod.spec.volumes.map((v: { name: string }) => v.name),
      ...workload.spec.volumeClaimTemplates.map((v: { metadata: { name: string } }) => v.metadata.name),
    ]);
    for (const name of mounts.keys()) expect(volumes.has(name)).toBe(true);
    const env = new Map(container.env.map((e: { name: string; value?: string }) => [e.name, e.value]));
    expect(env.get('SVC_TLS_CERT_PATH')).toBe(`${mounts.get('tls')}/tls.crt`);
    expect(env.get('SVC_DATA_DIR')).toBe(mounts.get('data'));
    expect(pod.spec.volumes.find((v: { name: string }) => v.name === 'tls').secret.secretName).toBe(
      (defaults.tls as Values).secretName,
    );
  });

  it('set the variables the chart sets, each one the server documents', () => {
    const helpers = readFileSync(join(CHART, 'templates/_helpers.tpl'), 'utf8');
    const inChart = new Set([...helpers.matchAll(/- name: (SVC_[A-Z0-9_]+)/g)].map((m) => m[1] as string));
    const conditional = [
      'SVC_ENCRYPTION_KEY_PREVIOUS',
      'SVC_DATABASE_URL',
      'SVC_REDIS_URL',
      'SVC_BACKUP_DIR',
      'SVC_BACKUP_INTERVAL',
      'SVC_BACKUP_KEEP',
    ];
    const plain = container.env.map((e: { name: string }) => e.name);
    expect(plain.sort()).toEqual([...inChart].filter((n) => !conditional.includes(n)).sort());
    const documented = readFileSync(join(ROOT, 'docs/operations/configuration.md'), 'utf8');
    const undocumented = [...inChart].filter((name) => !documented.includes(`\`${name}\``));
    expect(undocumented).toEqual([]);
    // What values.schema.json keeps out of `config` is exactly what the chart sets itself.
    expect([...schema.properties.config.propertyNames.not.enum].sort()).toEqual(
      [...inChart, 'SVC_AUTH_SECRET'].filter((n, i, all) => all.indexOf(n) === i).sort(),
    );
  });

  it('select the pods they are meant for, on the port the pods listen on', () => {
    const podLabels = pod.metadata.labels;
    const service = byKind.get('Service') as Manifest;
    expect(subset(service.spec.selector, podLabels)).toBe(true);
    expect(subset(workload.spec.selector.matchLabels, podLabels)).toBe(true);
    expect(subset((byKind.get('PodDisruptionBudget') as Manifest).spec.selector.matchLabels, podLabels)).toBe(
      true,
    );
    const policy = byKind.get('NetworkPolicy') as Manifest;
    expect(subset(policy.spec.podSelector.matchLabels, podLabels)).toBe(true);
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.spec.ingress[0].ports).toEqual([{ port: 8443, protocol: 'TCP' }]);
    expect(service.spec.ports[0].targetPort).toBe(container.ports[0].name);
    expect(workload.spec.serviceName).toBe(service.metadata.name);
    const secrets = container.env
      .filter((e: { valueFrom?: unknown }) => e.valueFrom)
      .map((e: { valueFrom: { secretKeyRef: { name: string; key: string } } }) => e.valueFrom.secretKeyRef);
    expect(secrets).toEqual([
      { name: (defaults.auth as Values).existingSecret, key: (defaults.auth as Values).key },
      { name: (defaults.encryption as Values).existingSecret, key: (defaults.encryption as Values).key },
    ]);
  });
});

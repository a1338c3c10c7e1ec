import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildConnectors, discoveryFromConfig } from './program.js';

describe('buildConnectors', () => {
  it('builds each built-in connector from the configuration file', () => {
    const d = mkdtempSync(join(tmpdir(), 'cw-agent-prog-'));
    writeFileSync(join(d, 'id'), 'not read until a connection is made');
    const built = buildConnectors({
      connectors: {
        NGINX: { allowed_dirs: [d], reload_command: ['systemctl', 'reload', 'nginx'] },
        Apache: { allowed_dirs: [d] },
        HAProxy: { allowed_dirs: [d] },
        JavaKeystore: { allowed_dirs: [d] },
        SSH: { allowed_dirs: ['/etc/nginx/tls'], identity_file: join(d, 'id') },
        Caddy: { allowed_dirs: [d] },
        Postfix: { allowed_dirs: [d] },
        Dovecot: { allowed_dirs: [d] },
        Traefik: { allowed_dirs: [d] },
        Envoy: { allowed_dirs: [d] },
        KubernetesSecret: {
          api_server: 'https://10.0.0.1:443',
          token_file: join(d, 'id'),
          ca_file: join(d, 'id'),
          allowed_namespaces: ['web'],
        },
      },
    });
    expect(built.map((c) => c.type)).toEqual([
      'NGINX',
      'Apache',
      'HAProxy',
      'JavaKeystore',
      'SSH',
      'Caddy',
      'Postfix',
      'Dovecot',
      'Traefik',
      'Envoy',
      'KubernetesSecret',
    ]);
  });

  it('names what is wrong', () => {
    expect(() => buildConnectors({ connectors: { IIS: { allowed_dirs: ['/x'] } } })).toThrow(
      'connectors.IIS: no built-in connector',
    );
    expect(() =>
      buildConnectors({
        connectors: {
          KubernetesSecret: { api_server: 'https://k8s:6443', allowed_namespaces: ['web'] } as never,
        },
      }),
    ).toThrow('connectors.KubernetesSecret: the token_file or ca_file cannot be read');
    expect(() =>
      buildConnectors({ connectors: { KubernetesSecret: { api_server: 'https://k8s:6443' } as never } }),
    ).toThrow('connectors.KubernetesSecret.allowed_namespaces must list namespaces');
    expect(() => discoveryFromConfig({ discovery: { paths: ['etc/ssl'] } })).toThrow(
      'discovery.paths must list absolute paths',
    );
    expect(discoveryFromConfig({ discovery: { paths: ['/etc/ssl'], interval_seconds: 60 } })).toEqual({
      paths: ['/etc/ssl'],
      intervalMs: 60_000,
    });
    expect(() => buildConnectors({ connectors: { SSH: { allowed_dirs: ['/x'] } } })).toThrow(
      'connectors.SSH.identity_file is required',
    );
    expect(() =>
      buildConnectors({
        connectors: { NGINX: { allowed_dirs: ['/x'], reload_command: 'nginx -s reload' as never } },
      }),
    ).toThrow('connectors.NGINX.reload_command must be an argv array');
  });
});

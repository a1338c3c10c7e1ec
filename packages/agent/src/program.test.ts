import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildConnectors } from './program.js';

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
      },
    });
    expect(built.map((c) => c.type)).toEqual(['NGINX', 'Apache', 'HAProxy', 'JavaKeystore', 'SSH']);
  });

  it('names what is wrong', () => {
    expect(() => buildConnectors({ connectors: { Envoy: { allowed_dirs: ['/x'] } } })).toThrow(
      'connectors.Envoy: no built-in connector',
    );
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

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectionFromEnv, requireHttpsUrl } from './config.js';

describe('agent connection settings', () => {
  it('refuses http:// naming the upgrade guide, and other schemes and credentials in the URL', () => {
    expect(() => requireHttpsUrl('http://cw.example:8443')).toThrow('docs/clients/https-upgrade.md');
    expect(() => requireHttpsUrl('ftp://cw.example')).toThrow('must be an https:// URL');
    expect(() => requireHttpsUrl('https://u:p@cw.example')).toThrow('must not carry credentials');
    expect(() => requireHttpsUrl('not a url')).toThrow('is not a URL');
  });

  it('reads the key from a file, the CA bundle, and the skip-verify flag', () => {
    const d = mkdtempSync(join(tmpdir(), 'cw-agent-cfg-'));
    writeFileSync(join(d, 'key'), 'cwa_abc\n');
    writeFileSync(join(d, 'ca.pem'), '-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n');
    const c = connectionFromEnv({
      SVC_SERVER_URL: 'https://cw.example',
      SVC_AGENT_ID: 'ag-1',
      SVC_AGENT_API_KEY_FILE: join(d, 'key'),
      SVC_SERVER_CA_BUNDLE_PATH: join(d, 'ca.pem'),
      SVC_SERVER_TLS_INSECURE_SKIP_VERIFY: 'true',
    });
    expect(c).toMatchObject({ apiKey: 'cwa_abc', agentId: 'ag-1', insecureSkipVerify: true });
    expect(c.caBundlePem).toContain('BEGIN CERTIFICATE');
  });

  it('names each missing or bad value', () => {
    const base = { SVC_SERVER_URL: 'https://cw.example', SVC_AGENT_ID: 'ag-1', SVC_AGENT_API_KEY: 'cwa_x' };
    expect(() => connectionFromEnv({ ...base, SVC_SERVER_URL: undefined })).toThrow(
      'SVC_SERVER_URL is required',
    );
    expect(() => connectionFromEnv({ ...base, SVC_AGENT_ID: undefined })).toThrow('SVC_AGENT_ID is required');
    expect(() => connectionFromEnv({ ...base, SVC_AGENT_API_KEY: undefined })).toThrow(
      'SVC_AGENT_API_KEY or',
    );
    expect(() => connectionFromEnv({ ...base, SVC_AGENT_API_KEY_FILE: '/nonexistent' })).toThrow('not both');
    expect(() => connectionFromEnv({ ...base, SVC_SERVER_TLS_INSECURE_SKIP_VERIFY: 'maybe' })).toThrow(
      'SVC_SERVER_TLS_INSECURE_SKIP_VERIFY must be true or false',
    );
    expect(() => connectionFromEnv({ ...base, SVC_SERVER_CA_BUNDLE_PATH: '/nonexistent/ca.pem' })).toThrow(
      'SVC_SERVER_CA_BUNDLE_PATH names a file that cannot be read',
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpsApp, type OpsApp, registerAgent } from './ops-support.js';

/**
 * A target's config is shown — paths, reload command, host, alias — with every secret value
 * masked: a password, a token, a private key (by its member's name at any depth, or by a PEM
 * key in any string). The masked view cannot be sent back as a config: that would store the mask.
 */

let app: OpsApp;
beforeAll(async () => {
  app = await createOpsApp();
}, 60_000);
afterAll(() => app?.close());

const KEY_PEM = '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ+Z\n-----END PRIVATE KEY-----\n';
const CONFIG = {
  cert_path: '/etc/nginx/tls/site.pem',
  key_path: '/etc/nginx/tls/site.key',
  reload_command: 'systemctl reload nginx',
  keystore_password: 'keystore-secret-1',
  ssh: { host: 'web1.internal', user: 'deploy', private_key: KEY_PEM, known_hosts_file: '/etc/ssh/known' },
  api_token: 'tok-secret-2',
  extra: ['plain', KEY_PEM],
};
const MASKED = {
  cert_path: '/etc/nginx/tls/site.pem',
  key_path: '/etc/nginx/tls/site.key',
  reload_command: 'systemctl reload nginx',
  keystore_password: '********',
  ssh: { host: 'web1.internal', user: 'deploy', private_key: '********', known_hosts_file: '/etc/ssh/known' },
  api_token: '********',
  extra: ['plain', '********'],
};

describe("a target's config in its answers", () => {
  it('is shown on create, read and update with every secret masked; the list carries none', async () => {
    const agent = await registerAgent(app, 'config-view');
    const created = await app.call('POST', '/api/v1/targets', {
      body: { agent_id: agent.id, name: 'web1', type: 'NGINX', config: CONFIG },
    });
    expect(created.status).toBe(201);
    const target = await created.json();
    expect(target.config).toEqual(MASKED);
    const read = await (await app.call('GET', `/api/v1/targets/${target.id}`)).json();
    expect(read.config).toEqual(MASKED);
    const list = await (await app.call('GET', `/api/v1/targets?agent_id=${agent.id}`)).text();
    for (const body of [JSON.stringify(target), JSON.stringify(read), list]) {
      for (const secret of ['keystore-secret-1', 'tok-secret-2', 'PRIVATE KEY'])
        expect(body).not.toContain(secret);
    }
    const updated = await app.call('PUT', `/api/v1/targets/${target.id}`, {
      body: { config: { ...CONFIG, reload_command: 'nginx -s reload' } },
    });
    expect(updated.status).toBe(200);
    expect((await updated.json()).config).toEqual({ ...MASKED, reload_command: 'nginx -s reload' });
    // What the agent gets is the stored config itself.
    const stored = await app.services.deps.storage.targets.getWithConfig(target.id);
    expect(stored?.config).toEqual({ ...CONFIG, reload_command: 'nginx -s reload' });
  });

  it('refuses a config that carries the mask back, naming the member; the secret stays', async () => {
    const agent = await registerAgent(app, 'config-mask');
    const created = await (
      await app.call('POST', '/api/v1/targets', {
        body: { agent_id: agent.id, name: 'kv', type: 'NGINX', config: CONFIG },
      })
    ).json();
    const res = await app.call('PUT', `/api/v1/targets/${created.id}`, { body: { config: created.config } });
    expect(res.status).toBe(400);
    expect((await res.json()).errors).toEqual([
      { field: 'config.keystore_password', message: 'is the mask of a stored secret: give the value itself' },
    ]);
    expect((await app.services.deps.storage.targets.getWithConfig(created.id))?.config).toEqual(CONFIG);
  });
});

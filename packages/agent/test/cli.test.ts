/**
 * The certwright-agent program as an operator runs it: refused start-up for an http:// URL,
 * registration storing the key 0600, the loopback status endpoint, a clean exit on SIGTERM and
 * on retirement (410).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_VERSION } from '../src/index.js';
import { freePort } from './support/nginx.js';
import { ADMIN_KEY, startTestServer, type TestServer } from './support/server.js';

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function runCli(args: string[], env: Record<string, string>): Run {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.on('data', (d) => {
    text += d;
  });
  child.stderr?.on('data', (d) => {
    text += d;
  });
  return { child, output: () => text, exited: new Promise((r) => child.once('exit', (code) => r(code))) };
}

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`gave up waiting for ${what}`);
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
}, 60_000);
afterAll(() => server?.close());

describe('certwright-agent', { timeout: 180_000 }, () => {
  it('answers --help and --version without any configuration, and refuses an unknown flag with exit 2', async () => {
    const help = runCli(['--help'], {});
    expect(await help.exited).toBe(0);
    expect(help.output()).toMatch(/^Usage: certwright-agent \[--config <file>\]/);
    expect(help.output()).toContain('register');
    const registerHelp = runCli(['register', '-h'], {});
    expect(await registerHelp.exited).toBe(0);
    expect(registerHelp.output()).toMatch(/^Usage: /);
    const version = runCli(['--version'], {});
    expect(await version.exited).toBe(0);
    expect(version.output()).toBe(`${AGENT_VERSION}\n`);
    const unknown = runCli(['--confgi', 'agent.json'], {});
    expect(await unknown.exited).toBe(2);
    expect(unknown.output()).toMatch(/^certwright-agent: unknown option "--confgi"\n/);
    const noValue = runCli(['register', '--name'], {});
    expect(await noValue.exited).toBe(2);
    expect(noValue.output()).toMatch(/--name needs a value/);
  });

  it('refuses an http:// server URL at start-up, naming the upgrade guide', async () => {
    const run = runCli([], {
      SVC_SERVER_URL: 'http://127.0.0.1:8443',
      SVC_AGENT_ID: 'ag-1',
      SVC_AGENT_API_KEY: 'cwa_x',
    });
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('docs/clients/https-upgrade.md');
    expect(run.output()).not.toContain('cwa_x');
  });

  it('registers, serves its status on loopback, and stops cleanly on SIGTERM and on retirement', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cw-agent-cli-'));
    const keyFile = join(dir, 'agent.key');
    const env = {
      SVC_SERVER_URL: server.url,
      SVC_SERVER_CA_BUNDLE_PATH: server.caPath,
      SVC_AGENT_API_KEY_FILE: keyFile,
    };
    const registration = runCli(['register', '--name', 'cli-agent'], { ...env, SVC_API_KEY: ADMIN_KEY });
    expect(await registration.exited).toBe(0);
    const { agent_id: agentId } = JSON.parse(registration.output().trim().split('\n').pop()!);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(registration.output()).not.toContain(readFileSync(keyFile, 'utf8').trim());

    const port = await freePort();
    const config = join(dir, 'agent.json');
    writeFileSync(
      config,
      JSON.stringify({
        state_dir: join(dir, 'state'),
        poll_interval_seconds: 0.2,
        heartbeat_interval_seconds: 0.2,
        status_listen: `127.0.0.1:${port}`,
        status_file: join(dir, 'status.json'),
      }),
    );
    const status = async () => {
      try {
        return (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as Record<string, unknown>;
      } catch {
        return null;
      }
    };

    const first = runCli(['--config', config], { ...env, SVC_AGENT_ID: agentId });
    await until(async () => (await status())?.last_heartbeat_at != null, 'a heartbeat');
    expect((await server.call('GET', `/api/v1/agents/${agentId}`)).body.status).toBe('Online');
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const lines = first
      .output()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.at(-1)).toMatchObject({ level: 'info', reason: 'stopped' });
    expect(JSON.parse(readFileSync(join(dir, 'status.json'), 'utf8')).state).toBe('stopped');

    const second = runCli(['--config', config], { ...env, SVC_AGENT_ID: agentId });
    await until(async () => (await status())?.state === 'running', 'the second start');
    const retired = await server.call('DELETE', `/api/v1/agents/${agentId}?force=true&reason=host%20gone`);
    expect(retired.status).toBe(200);
    expect(await second.exited).toBe(0);
    expect(second.output()).toContain('"reason":"retired"');
    // No key material in any log line.
    expect(first.output() + second.output()).not.toMatch(/cwa_|PRIVATE KEY/);
  });

  it('fails start-up with exit 2 naming a bad configuration value', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cw-agent-cli-'));
    const config = join(dir, 'agent.json');
    writeFileSync(config, JSON.stringify({ connectors: { NGINX: { allowed_dirs: [] } } }));
    const run = runCli(['--config', config], {
      SVC_SERVER_URL: server.url,
      SVC_AGENT_ID: 'ag-x',
      SVC_AGENT_API_KEY: 'cwa_y',
    });
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('connectors.NGINX.allowed_dirs');
  });
});

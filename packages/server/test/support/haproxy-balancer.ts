import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './private-services.js';

export function haproxySkipReason(): string | undefined {
  try {
    execFileSync('haproxy', ['-v'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'haproxy is not installed';
  }
}

/**
 * Debian's HAProxy in front of the instances, configured as docs/operations/scaling.md shows:
 * TCP mode (TLS passes through to the instances untouched), round robin, `GET /ready` over TLS
 * as the health check (every second here, instead of two), plus a connection refused by an
 * instance not yet marked down retried on another (`option redispatch`). Its configuration
 * lives in a temp directory; it listens on a loopback port chosen before the instances start,
 * so they can announce it as SVC_BASE_URL.
 */
export class HaproxyBalancer {
  readonly name = 'HAProxy (mode tcp)';
  port = 0;
  #dir: string | undefined;
  #child: ChildProcess | undefined;
  #log = '';

  async start(): Promise<void> {
    this.port = await freePort();
    this.#dir = mkdtempSync(join(tmpdir(), 'cw-haproxy-'));
  }

  /** Writes the configuration naming `targets` and starts HAProxy on it (once). */
  async route(targets: readonly number[]): Promise<void> {
    if (!this.#dir) throw new Error('HaproxyBalancer.route before start');
    const config = join(this.#dir, 'haproxy.cfg');
    writeFileSync(
      config,
      [
        'global',
        '  maxconn 4096',
        'defaults',
        '  timeout connect 5s',
        '  timeout client 60s',
        '  timeout server 60s',
        '  timeout tunnel 1h',
        '  retries 3',
        '  option redispatch',
        'frontend certwright',
        '  mode tcp',
        `  bind 127.0.0.1:${this.port}`,
        '  default_backend instances',
        'backend instances',
        '  mode tcp',
        '  balance roundrobin',
        '  option httpchk GET /ready',
        '  http-check expect status 200',
        '  default-server check check-ssl verify none inter 1s fall 2 rise 2 on-marked-down shutdown-sessions',
        ...targets.map((port, i) => `  server cw${i + 1} 127.0.0.1:${port}`),
        '',
      ].join('\n'),
    );
    execFileSync('haproxy', ['-c', '-q', '-f', config], { stdio: 'pipe' });
    // -db: stay in the foreground, so this process owns it and stop() ends it.
    const child = spawn('haproxy', ['-db', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (d) => {
      this.#log += d;
    });
    child.stderr?.on('data', (d) => {
      this.#log += d;
    });
    this.#child = child;
    // Listening once a connection to its port is accepted; route() runs once every instance
    // is ready, so the first health checks pass.
    for (let waited = 0; ; waited += 100) {
      if (child.exitCode !== null) throw new Error(`haproxy exited:\n${this.#log}`);
      if (await accepts(this.port)) return;
      if (waited > 30_000) throw new Error(`haproxy did not listen on ${this.port}:\n${this.#log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      // SIGUSR1 would wait for connections to close; the cluster is being torn down.
      child.kill('SIGTERM');
      await exited;
    }
    if (this.#dir) rmSync(this.#dir, { recursive: true, force: true });
    this.#dir = undefined;
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

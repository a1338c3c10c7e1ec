/**
 * A disk that fills up during a deployment. On a small tmpfs (mounted by the test when it runs
 * as root and may mount; otherwise the write call is replaced by one failing with ENOSPC, and
 * the test says so) the deployment fails while writing, the previous certificate and key stay
 * in place byte for byte, no temporary file or journal is left, and the agent reports the job
 * Failed with the reason.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CertwrightAgent, type ConnectorTarget, type FileWriter, nginxConnector } from '../src/index.js';
import { makeServerTls } from './support/server.js';
import { issueLeaf, type TestPki } from './support/servers.js';

const PAGE = 4096;

/** A 64 KiB tmpfs, or null (with the reason) where mounting is not allowed. */
function smallDisk(): { dir: string; unmount(): void } | { reason: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cw-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0755', 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: `mounting a tmpfs failed (${(error as Error).message.split('\n')[0]})` };
  }
  return {
    dir,
    unmount: () => {
      try {
        execFileSync('umount', [dir], { stdio: 'pipe' });
        rmSync(dir, { recursive: true, force: true });
      } catch {
        // left for the system's tmp cleanup
      }
    },
  };
}

/** Fills the file system with one-page files; returns them so some can be freed again. */
function fill(dir: string): string[] {
  const filler: string[] = [];
  for (let i = 0; ; i++) {
    const path = join(dir, `filler-${i}`);
    try {
      writeFileSync(path, Buffer.alloc(PAGE, 1));
      filler.push(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      rmSync(path, { force: true });
      return filler;
    }
  }
}

const material = (p: TestPki, v: string) => ({
  versionId: v,
  serialNumber: '01',
  certPem: p.certPem,
  chainPem: p.chainPem,
  privateKeyPem: p.keyPem,
});

const enospc: FileWriter = () => {
  throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
};

interface Disk {
  dir: string;
  /** Frees `pages` pages of filler (after the initial files were written). */
  free(pages: number): void;
  /** The write port to use: the real one on a real full disk. */
  writer?: FileWriter;
  close(): void;
}

let disk: Disk;
let initial: TestPki;
beforeAll(() => {
  initial = issueLeaf();
  const mounted = smallDisk();
  if ('reason' in mounted) {
    console.log(`disk-full test: ${mounted.reason}; an injected write port fails with ENOSPC instead`);
    const dir = mkdtempSync(join(tmpdir(), 'cw-full-'));
    disk = { dir, free: () => undefined, writer: enospc, close: () => rmSync(dir, { recursive: true }) };
  } else {
    let filler: string[] = [];
    disk = {
      dir: mounted.dir,
      free: (pages) => {
        for (const f of filler.splice(0, pages)) rmSync(f);
      },
      close: mounted.unmount,
    };
    writeFileSync(join(mounted.dir, 'fullchain.pem'), initial.certPem + initial.chainPem);
    writeFileSync(join(mounted.dir, 'key.pem'), initial.keyPem);
    filler = fill(mounted.dir);
  }
});
afterAll(() => disk?.close());

const connector = () =>
  nginxConnector({
    allowedDirs: [disk.dir],
    // Never reached with the new files (the write fails first); after the restore the old files
    // are re-validated and reloaded, which for this file-only test is a no-op.
    validateCommand: ['true'],
    reloadCommand: ['true'],
    ...(disk.writer ? { writer: disk.writer } : {}),
  });
const target = (): ConnectorTarget => ({
  id: 'tg-full',
  name: 'full disk',
  type: 'NGINX',
  config: { cert_path: join(disk.dir, 'fullchain.pem'), key_path: join(disk.dir, 'key.pem') },
});
const leftovers = () => readdirSync(disk.dir).filter((n) => n.endsWith('.tmp') || n.includes('journal'));

describe('a full disk during a deployment', { timeout: 120_000 }, () => {
  it('with no room for a backup: nothing changes and the reason says so', async () => {
    if (disk.writer) {
      console.log(
        'disk-full test: without a real full disk a failing backup cannot be produced; covered by the next case',
      );
      return;
    }
    await expect(connector().deploy(target(), material(issueLeaf(), 'v2'))).rejects.toThrow(
      'keeping a backup of the current files failed: ENOSPC; nothing was changed',
    );
    expect(readFileSync(join(disk.dir, 'fullchain.pem'), 'utf8')).toBe(initial.certPem + initial.chainPem);
    expect(readFileSync(join(disk.dir, 'key.pem'), 'utf8')).toBe(initial.keyPem);
    expect(leftovers()).toEqual([]);
  });

  it('with room for the backups but not the new files: the old ones stay, nothing half-written', async () => {
    // Two backups and the journal take a page each; the first new file finds the disk full.
    disk.free(3);
    await expect(connector().deploy(target(), material(issueLeaf(), 'v2'))).rejects.toThrow(
      'writing the files failed: ENOSPC; the previous certificate was restored',
    );
    expect(readFileSync(join(disk.dir, 'fullchain.pem'), 'utf8')).toBe(initial.certPem + initial.chainPem);
    expect(readFileSync(join(disk.dir, 'key.pem'), 'utf8')).toBe(initial.keyPem);
    expect(leftovers()).toEqual([]);
  });

  it('the agent reports the deployment job Failed with the ENOSPC reason', async () => {
    const tls = makeServerTls();
    const reports: { path: string; body: { status?: string; error?: string } }[] = [];
    const next = issueLeaf();
    const work = {
      jobs: [
        {
          job: {
            id: 'job-full',
            type: 'Deployment',
            status: 'Running',
            certificate_id: 'crt-1',
            target_id: 'tg-full',
            payload: {},
            attempts: 1,
            max_attempts: 3,
          },
          target: target(),
          certificate: {
            version_id: 'v2',
            serial_number: '02',
            cert_pem: next.certPem,
            chain_pem: next.chainPem,
            private_key_pem: next.keyPem,
          },
        },
      ],
      awaiting_csr: [],
    };
    const server: Server = createServer(
      { cert: readFileSync(tls.cert), key: readFileSync(tls.key) },
      (req, res) => {
        let text = '';
        req.on('data', (d) => {
          text += d;
        });
        req.on('end', () => {
          if (req.url?.endsWith('/work')) {
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(work));
            work.jobs = [];
            return;
          }
          if (req.url?.includes('/jobs/')) reports.push({ path: req.url, body: JSON.parse(text) });
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"job-full"}');
        });
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const agent = new CertwrightAgent({
        connection: {
          serverUrl: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
          agentId: 'ag-full',
          apiKey: 'cwa_test',
          caBundlePem: readFileSync(tls.ca, 'utf8'),
        },
        connectors: [connector()],
        heartbeatIntervalMs: 3_600_000,
      });
      await agent.tick();
      expect(reports).toEqual([
        {
          path: '/api/v1/agents/ag-full/jobs/job-full/status',
          body: {
            status: 'Failed',
            error: expect.stringMatching(
              /^(writing the files failed|keeping a backup of the current files failed): ENOSPC/,
            ),
          },
        },
      ]);
      expect(agent.status().jobs_failed).toBe(1);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
    expect(readFileSync(join(disk.dir, 'fullchain.pem'), 'utf8')).toBe(initial.certPem + initial.chainPem);
    expect(leftovers()).toEqual([]);
  });
});

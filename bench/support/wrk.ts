/**
 * The cheap OCSP load generator: wrk (Debian package `wrk`), a C program with an event loop per
 * thread, so it takes a fraction of the CPU per request that a Node generator does and leaves
 * the cores to the server measured. HTTP/1.1 keep-alive over TLS (whatever the server offers:
 * TLS 1.3 for certwright) or plain TCP. Cached requests send one fixed body; fresh ones end in
 * a new random 16-byte nonce per request (a Lua `request` function).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function wrkAvailable(): boolean {
  return spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
}

export interface WrkLoad {
  url: string;
  /** The DER OCSPRequest; with `nonceTail`, its last 16 bytes are replaced by a random nonce per request. */
  body: Uint8Array;
  nonceTail: boolean;
  connections: number;
  threads: number;
  seconds: number;
}

export interface WrkResult {
  requests: number;
  seconds: number;
  /** Answers that were not 2xx, and socket errors (connect, read, write, timeout). */
  failed: number;
  /** CPU (user + system) the generator used, ms. */
  cpuMs: number;
  /** Bytes read, answers' heads included: a check that answers are what they should be. */
  bytesRead: number;
}

/** Lua string literal of arbitrary bytes (decimal escapes, three digits each). */
const luaBytes = (bytes: Uint8Array) =>
  `"${Array.from(bytes, (b) => `\\${String(b).padStart(3, '0')}`).join('')}"`;

function script(load: WrkLoad): string {
  const head = ['wrk.method = "POST"', 'wrk.headers["Content-Type"] = "application/ocsp-request"'];
  if (!load.nonceTail) return [...head, `wrk.body = ${luaBytes(load.body)}`].join('\n');
  const prefix = load.body.subarray(0, load.body.length - 16);
  return [
    ...head,
    `local prefix = ${luaBytes(prefix)}`,
    'local r, char = math.random, string.char',
    'local n = 0',
    'function setup(thread) n = n + 1; thread:set("seed", n) end',
    'function init(args) math.randomseed(os.time() * 100 + (seed or 0)) end',
    'function request()',
    '  return wrk.format(nil, nil, nil, prefix .. char(r(0,255), r(0,255), r(0,255), r(0,255),',
    '    r(0,255), r(0,255), r(0,255), r(0,255), r(0,255), r(0,255), r(0,255), r(0,255),',
    '    r(0,255), r(0,255), r(0,255), r(0,255)))',
    'end',
  ].join('\n');
}

/**
 * Runs wrk once; `onStart` is called right after it is spawned (the caller samples the server's
 * CPU there). Its CPU comes from the shell's `times` after it exits (children's user and system).
 */
export async function runWrk(load: WrkLoad, onStart: () => void = () => {}): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'cw-wrk-'));
  const file = join(dir, 'load.lua');
  writeFileSync(file, script(load));
  try {
    const args = [
      `-t${load.threads}`,
      `-c${load.connections}`,
      `-d${load.seconds}s`,
      '--timeout',
      '10s',
      '-s',
      file,
      load.url,
    ];
    const child = spawn('sh', ['-c', 'wrk "$@" && times', 'sh', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onStart();
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      out += c;
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    if (code !== 0) throw new Error(`wrk exited ${code}: ${out.slice(-400)}`);
    const done = /(\d+) requests in ([\d.]+)(us|ms|s|m)\b, ([\d.]+)([KMG]?B) read/.exec(out);
    if (!done) throw new Error(`wrk printed no request count: ${out.slice(-400)}`);
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
    const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
    const socketErrors = socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
    // `times` prints the shell's own times, then its children's: the last pair is wrk's.
    const pairs = [...out.matchAll(/(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/g)];
    const last = pairs.at(-1);
    const cpuMs = last
      ? (Number(last[1]) * 60 + Number(last[2]) + Number(last[3]) * 60 + Number(last[4])) * 1000
      : Number.NaN;
    return {
      requests: Number(done[1]),
      seconds: Number(done[2]) * { us: 1e-6, ms: 1e-3, s: 1, m: 60 }[done[3] as 'us' | 'ms' | 's' | 'm'],
      failed: non2xx + socketErrors,
      cpuMs,
      bytesRead:
        Number(done[4]) *
        { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 }[done[5] as 'B' | 'KB' | 'MB' | 'GB'],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

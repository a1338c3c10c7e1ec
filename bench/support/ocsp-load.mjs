/**
 * OCSP load generator for bench/ocsp.ts, run as its own process so that its CPU is not the
 * server's: `connections` keep-alive connections (TLS 1.3 or plain TCP), one request in flight
 * on each, for `seconds`. Requests are pre-encoded HTTP/1.1 bytes; `fresh` gives each request a
 * new random nonce (so the responder signs every answer). Prints one JSON line
 * {ok, failed, ms, cpuMs} on stdout (cpuMs: this process's CPU over the counted window).
 * Input: one JSON argument {host, port, tls, ca, path, der, certId, fresh, connections,
 * seconds, warmup}.
 */
import { randomBytes } from 'node:crypto';
import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

const o = JSON.parse(process.argv[2]);
const base = Buffer.from(o.der, 'base64');

/** A DER OCSPRequest; with a nonce when fresh (request built by hand: SEQ{SEQ{SEQ{SEQ{certId}}, [2]{SEQ{ext}}}}). */
function tlv(tag, ...parts) {
  const body = Buffer.concat(parts);
  const n = body.length;
  const len =
    n < 128 ? Buffer.from([n]) : n < 256 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 255]);
  return Buffer.concat([Buffer.from([tag]), len, body]);
}
const certId = Buffer.from(o.certId, 'base64');
const NONCE_OID = Buffer.from('06092b0601050507300102', 'hex');
function freshBody() {
  const ext = tlv(0x30, NONCE_OID, tlv(0x04, tlv(0x04, randomBytes(16))));
  return tlv(0x30, tlv(0x30, tlv(0x30, tlv(0x30, certId)), tlv(0xa2, tlv(0x30, ext))));
}
function requestBytes(body) {
  return Buffer.concat([
    Buffer.from(
      `POST ${o.path} HTTP/1.1\r\nHost: ${o.host}\r\nContent-Type: application/ocsp-request\r\nContent-Length: ${body.length}\r\n\r\n`,
    ),
    body,
  ]);
}
const cached = requestBytes(base);

let ok = 0;
let failed = 0;
let counting = false;
let stop = false;

function open() {
  return new Promise((resolve, reject) => {
    const socket = o.tls
      ? tlsConnect(
          { host: o.host, port: o.port, ca: o.ca, minVersion: 'TLSv1.3', servername: undefined },
          () => resolve(socket),
        )
      : tcpConnect({ host: o.host, port: o.port }, () => resolve(socket));
    socket.setNoDelay(true);
    socket.once('error', reject);
  });
}

/**
 * One request in flight per connection; a connection the server closes (openssl answers one
 * request per connection) is replaced and the request resent on the new one.
 */
async function drive(first) {
  let socket = first;
  live.add(socket);
  while (!stop) {
    await new Promise((resolve) => {
      let buf = Buffer.alloc(0);
      let settled = false;
      const finish = () => {
        if (!settled) {
          settled = true;
          resolve();
        }
      };
      const send = () => socket.write(o.fresh ? requestBytes(freshBody()) : cached);
      socket.on('close', finish);
      socket.on('error', finish);
      socket.on('data', (chunk) => {
        buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
        for (;;) {
          const end = buf.indexOf('\r\n\r\n');
          if (end < 0) return;
          const head = buf.subarray(0, end).toString('latin1');
          const m = /content-length:\s*(\d+)/i.exec(head);
          if (!m) {
            // No length (e.g. an error answer sent chunked): count it as failed and reconnect.
            if (counting) failed++;
            socket.destroy();
            return finish();
          }
          const len = Number(m[1]);
          if (buf.length < end + 4 + len) return;
          if (counting) head.startsWith('HTTP/1.1 200') || head.startsWith('HTTP/1.0 200') ? ok++ : failed++;
          buf = buf.subarray(end + 4 + len);
          if (stop || /connection:\s*close/i.test(head)) {
            socket.destroy();
            return finish();
          }
          send();
        }
      });
      send();
    });
    socket.destroy();
    live.delete(socket);
    if (!stop) {
      socket = await open();
      live.add(socket);
    }
  }
}

/** Connections open now, closed after the grace period at the end. */
const live = new Set();
const sockets = [];
for (let i = 0; i < o.connections; i++) sockets.push(await open());
const all = Promise.all(sockets.map(drive));
await new Promise((r) => setTimeout(r, o.warmup * 1000));
counting = true;
const t = performance.now();
const cpu0 = process.cpuUsage();
await new Promise((r) => setTimeout(r, o.seconds * 1000));
counting = false;
const ms = performance.now() - t;
const cpu = process.cpuUsage(cpu0);
const cpuMs = (cpu.user + cpu.system) / 1000;
stop = true;
// A responder that serves one connection at a time can leave requests unanswered: give the
// answers in flight two seconds, then close what is left.
const grace = setTimeout(() => {
  for (const s of live) s.destroy();
}, 2000);
// A connect the responder never accepts is not in `live`: stop waiting for it after 3 s.
await Promise.race([all, new Promise((r) => setTimeout(r, 3000))]);
clearTimeout(grace);
process.stdout.write(`${JSON.stringify({ ok, failed, ms, cpuMs })}\n`, () => process.exit(0));

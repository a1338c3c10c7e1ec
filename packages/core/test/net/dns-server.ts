import { createSocket, type Socket } from 'node:dgram';
import ipaddr from 'ipaddr.js';

/**
 * A DNS server for tests (RFC 1035 §4): answers A and AAAA questions from a table, NXDOMAIN for
 * unknown names, on 127.0.0.1 and a random UDP port. Only what a stub resolver asks is read.
 */
export interface TestDnsServer {
  /** `127.0.0.1:<port>`, the form `dnsServerResolver` takes. */
  address: string;
  /** Every question asked, as `name TYPE`. */
  questions: string[];
  close(): Promise<void>;
}

const TYPES: Record<number, string> = { 1: 'A', 28: 'AAAA' };

function readQuestion(query: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = [];
  let offset = 12;
  while (query[offset] !== 0) {
    const length = query[offset]!;
    labels.push(query.subarray(offset + 1, offset + 1 + length).toString('ascii'));
    offset += 1 + length;
  }
  offset += 1;
  return { name: labels.join('.').toLowerCase(), type: query.readUInt16BE(offset), end: offset + 4 };
}

function answer(query: Buffer, table: Record<string, string[]>, questions: string[]): Buffer {
  const { name, type, end } = readQuestion(query);
  questions.push(`${name} ${TYPES[type] ?? type}`);
  const known = table[name];
  const wanted = (known ?? [])
    .map((a) => ipaddr.parse(a))
    .filter((a) => (type === 1 ? a.kind() === 'ipv4' : a.kind() === 'ipv6'));
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0);
  header.writeUInt16BE(known ? 0x8180 : 0x8183, 2); // response, recursion available; rcode 3 = NXDOMAIN
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(type === 1 || type === 28 ? wanted.length : 0, 6);
  const records = wanted.map((a) => {
    const rdata = Buffer.from(a.toByteArray());
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    rr.writeUInt16BE(type, 2);
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return Buffer.concat([header, query.subarray(12, end), ...records]);
}

export async function startDnsServer(table: Record<string, string[]>): Promise<TestDnsServer> {
  const socket: Socket = createSocket('udp4');
  const questions: string[] = [];
  socket.on('message', (query, peer) => {
    socket.send(answer(query, table, questions), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    questions,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

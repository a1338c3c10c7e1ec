import { createSocket } from 'node:dgram';

/**
 * A DNS server for the dns-01 tests (RFC 1035 §4, TXT RDATA §3.3.14) on 127.0.0.1 and a random
 * UDP port: TXT answers from a table, NOERROR with no answer for a name listed without
 * records, SERVFAIL or silence for the names given, NXDOMAIN for the rest.
 */
export interface TxtDnsServer {
  /** `127.0.0.1:<port>`, the form `dns01Resolver` takes. */
  address: string;
  /** Every question asked, as `name TYPE-number`. */
  questions: string[];
  close(): Promise<void>;
}

export interface TxtDnsTable {
  /** name → its TXT records, each as its character-strings. */
  records: Record<string, string[][]>;
  servfail?: readonly string[];
  /** Names whose questions are never answered. */
  silent?: readonly string[];
}

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

function txtRdata(strings: string[]): Buffer {
  return Buffer.concat(
    strings.map((s) => {
      const bytes = Buffer.from(s, 'utf8');
      return Buffer.concat([Buffer.from([bytes.length]), bytes]);
    }),
  );
}

function answer(query: Buffer, table: TxtDnsTable, name: string, type: number, end: number): Buffer {
  const records = table.records[name];
  const rcode = table.servfail?.includes(name) ? 2 : records ? 0 : 3;
  const answers = rcode === 0 && type === 16 ? records! : [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0);
  header.writeUInt16BE(0x8180 | rcode, 2); // response, recursion desired and available
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  const rrs = answers.map((strings) => {
    const rdata = txtRdata(strings);
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    rr.writeUInt16BE(16, 2); // TXT
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return Buffer.concat([header, query.subarray(12, end), ...rrs]);
}

export async function startTxtDnsServer(table: TxtDnsTable): Promise<TxtDnsServer> {
  const socket = createSocket('udp4');
  const questions: string[] = [];
  socket.on('message', (query, peer) => {
    const { name, type, end } = readQuestion(query);
    questions.push(`${name} ${type}`);
    if (table.silent?.includes(name)) return;
    socket.send(answer(query, table, name, type, end), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    questions,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';

export const PG_ADMIN_URL = process.env.SVC_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const required = process.env.SVC_TEST_REQUIRE_SERVICES === '1';

/** Why PostgreSQL tests are skipped, or undefined when the server answers. Throws when required. */
export async function postgresSkipReason(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    const reason = `PostgreSQL at ${new URL(PG_ADMIN_URL).host} unreachable: ${(error as Error).message}`;
    if (required) throw new Error(`SVC_TEST_REQUIRE_SERVICES=1 but ${reason}`);
    return reason;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A database of its own for one test file; other engineers' runs share the server. */
export async function createTempDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `cw_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/**
 * A TCP relay in front of a database server, so a test can take "the database" away and bring
 * it back on the same port without touching the shared server.
 */
export class TcpRelay {
  #server: net.Server | undefined;
  readonly #sockets = new Set<net.Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.#server = server;
  }

  /** Refuses new connections and cuts the open ones, like a database that went down. */
  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

import net from 'node:net';

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

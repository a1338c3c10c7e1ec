import net from 'node:net';

/**
 * A round-robin TCP load balancer on 127.0.0.1 for scale-out tests: each new connection goes to
 * the next target (TLS passes through untouched, as with HAProxy in `mode tcp`). A target that
 * refuses the connection is skipped for that connection, as a balancer's health check would.
 */
export class RoundRobinBalancer {
  readonly name = 'Node round-robin TCP balancer';
  #server: net.Server | undefined;
  readonly #sockets = new Set<net.Socket>();
  #next = 0;
  targets: number[] = [];
  port = 0;
  /** Connections handed to each target port, for tests to see the load spread. */
  readonly counts = new Map<number, number>();

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      this.#track(client);
      client.pause();
      this.#connect(client, 0);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.#server = server;
  }

  /** Sends new connections to `targets` (instance ports on 127.0.0.1) from now on. */
  async route(targets: readonly number[]): Promise<void> {
    this.targets = [...targets];
  }

  #track(socket: net.Socket) {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => {});
  }

  #connect(client: net.Socket, tried: number) {
    if (this.targets.length === 0 || tried >= this.targets.length) {
      client.destroy();
      return;
    }
    const port = this.targets[this.#next++ % this.targets.length]!;
    const upstream = net.connect(port, '127.0.0.1');
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      this.#track(upstream);
      this.counts.set(port, (this.counts.get(port) ?? 0) + 1);
      client.pipe(upstream).pipe(client);
      client.resume();
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    upstream.once('error', () => {
      if (connected) return;
      upstream.destroy();
      this.#connect(client, tried + 1);
    });
  }

  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}

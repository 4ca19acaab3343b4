import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A stable address for a gateway that restarts on a new port: a TCP forwarder holding its own
 * port for the whole test, piping each connection to the port it is pointed at now. Choosing a
 * free port and handing it to each restart instead let another process take it in between.
 * (A few lines of node:net; a proxy package such as http-proxy would add HTTP handling not needed.)
 */
export class TcpForwarder {
  private readonly server = createServer((client) => this.pipe(client));
  private readonly sockets = new Set<Socket>();
  private target: number | undefined;

  /** Listens on a port of its own (0: the system picks it) and returns the address to advertise. */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** New connections go to this URL's port from now on (those open keep theirs). */
  retarget(url: string): void {
    this.target = Number(new URL(url).port);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pipe(client: Socket): void {
    this.track(client);
    // Nothing to reach (between a stop and the next start): dropped, as a down gateway would be.
    if (this.target === undefined) {
      client.destroy();
      return;
    }
    const upstream = this.track(createConnection(this.target, '127.0.0.1'));
    // Either side closing or failing ends the other, so a stopped gateway's connections end too.
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
  }

  private track(socket: Socket): Socket {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    return socket;
  }
}

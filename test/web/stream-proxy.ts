import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP relay in front of the gateway for the browser tests: the page is served through it, so
 * the test can drop the realtime sockets as a gateway restart or a network cut would (the
 * browser sees its connection closed under it), and refuse new ones for a while.
 */
export class StreamProxy {
  private server: Server | undefined;
  private readonly streams = new Set<Socket>();
  private readonly all = new Set<Socket>();
  /** While true, a new WebSocket upgrade is cut at once; plain HTTP still passes. */
  refuseStreams = false;
  upgradesSeen = 0;

  constructor(private readonly targetPort: number) {}

  get url(): string {
    return `http://127.0.0.1:${(this.server?.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((client) => {
      const upstream = connect(this.targetPort, '127.0.0.1');
      this.all.add(client);
      client.on('close', () => this.all.delete(client));
      let first = true;
      client.on('data', (chunk: Buffer) => {
        if (first) {
          first = false;
          if (/^GET [^ ]*\/events\/ws/.test(chunk.toString('latin1', 0, 256))) {
            this.upgradesSeen += 1;
            if (this.refuseStreams) {
              client.destroy();
              upstream.destroy();
              return;
            }
            this.streams.add(client);
            client.on('close', () => this.streams.delete(client));
          }
        }
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => client.write(chunk));
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** Cuts every open realtime socket; answers how many there were. */
  dropStreams(): number {
    const n = this.streams.size;
    for (const socket of this.streams) socket.destroy();
    this.streams.clear();
    return n;
  }

  async stop(): Promise<void> {
    this.dropStreams();
    for (const socket of this.all) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

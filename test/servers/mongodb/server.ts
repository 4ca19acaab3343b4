import { createServer, type Socket } from 'node:net';
import { CommandRunner, type CommandRecord } from './commands.js';
import { decodeRequest, encodeReply, MessageReader } from './wire.js';

export interface MongoTestServer {
  /** `mongodb://127.0.0.1:PORT/DATABASE?directConnection=true`. */
  url: string;
  /** The URL of another database on the same server (one per test keeps tests apart). */
  urlFor(database: string): string;
  /** Every command received (name, database, write concern), oldest first. */
  readonly commands: readonly CommandRecord[];
  /** Commands run, by name and collection, since the server started or the tally was cleared. */
  readonly tally: Map<string, number>;
  close(): Promise<void>;
}

/**
 * A MongoDB wire-protocol server for tests, in memory (see README.md in this folder): the official
 * driver connects to it over a real TCP socket. Not a database: nothing is written to disk.
 */
export async function startMongoTestServer(options: { port?: number; database?: string } = {}): Promise<MongoTestServer> {
  const runner = new CommandRunner();
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    const connectionId = runner.connectionId();
    const reader = new MessageReader();
    socket.on('data', (chunk) => {
      try {
        for (const message of reader.push(chunk)) {
          const request = decodeRequest(message);
          const reply = runner.run(request.command, connectionId);
          if (!request.moreToCome) socket.write(encodeReply(request, reply));
        }
      } catch {
        // A frame this server cannot read: drop the connection, as mongod does.
        socket.destroy();
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the test server has no TCP address');
  const urlFor = (database: string): string => `mongodb://127.0.0.1:${address.port}/${database}?directConnection=true`;
  return {
    url: urlFor(options.database ?? 'test'),
    urlFor,
    commands: runner.log,
    tally: runner.tally,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

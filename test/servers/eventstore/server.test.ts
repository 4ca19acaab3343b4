import { expect } from 'chai';
import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  START,
  StreamDeletedError,
  StreamNotFoundError,
  WrongExpectedVersionError,
  jsonEvent,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type Position,
  type ResolvedEvent,
} from '@eventstore/db-client';
import { startEventStoreTestServer, type EventStoreTestServer } from './server.js';

/**
 * The test server against the real client, for what the adapter's contract does not reach:
 * deletes, tombstones, the typed errors of both append paths, stream-name filters and checkpoints.
 */
for (const batchAppend of [true, false]) {
  describe(`EventStoreDB gRPC test server (${batchAppend ? 'BatchAppend' : 'Append'})`, () => {
    let server: EventStoreTestServer;
    let client: EventStoreDBClient;

    beforeEach(async () => {
      server = await startEventStoreTestServer({ batchAppend });
      client = EventStoreDBClient.connectionString(server.url);
    });

    afterEach(async () => {
      await client.dispose();
      await server.close();
    });

    const events = (...types: string[]) => types.map((type) => jsonEvent({ type, data: { type } }));

    async function read(stream: string, options: Parameters<EventStoreDBClient['readStream']>[1] = {}): Promise<string[]> {
      const types: string[] = [];
      for await (const resolved of client.readStream(stream, options) as AsyncIterable<ResolvedEvent>) types.push(resolved.event?.type ?? '?');
      return types;
    }

    async function failure(promise: Promise<unknown>): Promise<unknown> {
      return promise.then(
        () => expect.fail('expected a rejection'),
        (error: unknown) => error,
      );
    }

    it('reports a wrong expected version as the typed error, with the current revision', async () => {
      await client.appendToStream('s', events('A', 'B'), { expectedRevision: 'no_stream' });
      const error = await failure(client.appendToStream('s', events('C'), { expectedRevision: 0n }));
      expect(error).to.be.instanceOf(WrongExpectedVersionError);
      expect((error as WrongExpectedVersionError).actualVersion).to.equal(1n);
      const missing = await failure(client.appendToStream('t', events('C'), { expectedRevision: 'stream_exists' }));
      expect((missing as WrongExpectedVersionError).actualVersion).to.equal('no_stream');
    });

    it('soft-deletes a stream: it reads as not found, and a later append continues its revisions', async () => {
      await client.appendToStream('s', events('A', 'B'));
      const wrong = await failure(client.deleteStream('s', { expectedRevision: 0n }));
      expect(wrong).to.be.instanceOf(WrongExpectedVersionError);
      await client.deleteStream('s', { expectedRevision: 1n });
      expect(await failure(read('s'))).to.be.instanceOf(StreamNotFoundError);
      const result = await client.appendToStream('s', events('C'));
      expect(result.nextExpectedRevision).to.equal(2n);
      expect(await read('s')).to.deep.equal(['C']);
    });

    it('tombstones a stream: reads and appends fail with StreamDeleted', async () => {
      await client.appendToStream('s', events('A'));
      await client.tombstoneStream('s');
      expect(await failure(read('s'))).to.be.instanceOf(StreamDeletedError);
      expect(await failure(client.appendToStream('s', events('B')))).to.be.instanceOf(StreamDeletedError);
    });

    it('reads $all backwards from the end, with system events, and honours $maxCount', async () => {
      await client.appendToStream('a', events('A1', 'A2', 'A3'));
      await client.setStreamMetadata('a', { maxCount: 2 });
      const types: string[] = [];
      for await (const resolved of client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 2 })) types.push(resolved.event?.type ?? '?');
      expect(types).to.deep.equal(['$metadata', 'A3']);
      expect(await read('a')).to.deep.equal(['A2', 'A3']);
      expect(await read('a', { direction: BACKWARDS, fromRevision: END })).to.deep.equal(['A3', 'A2']);
    });

    it('filters a subscription on stream-name prefixes on the server and sends checkpoints', async () => {
      for (let i = 0; i < 10; i++) await client.appendToStream(i % 2 ? 'keep-1' : 'drop-1', events(`E${i}`));
      const checkpoints: Position[] = [];
      const subscription = client.subscribeToAll({
        fromPosition: START,
        filter: streamNameFilter({ prefixes: ['keep-'], maxSearchWindow: 2, checkpointInterval: 1, checkpointReached: (_s, position) => void checkpoints.push(position) }),
      });
      const seen: AllStreamResolvedEvent[] = [];
      for await (const resolved of subscription) {
        seen.push(resolved);
        if (seen.length === 5) break;
      }
      expect(seen.map((e) => e.event?.type)).to.deep.equal(['E1', 'E3', 'E5', 'E7', 'E9']);
      // One checkpoint per two events examined, each at the position of the last one examined.
      expect(checkpoints.length).to.be.at.least(4);
      const positions = checkpoints.map((p) => p.commit);
      expect([...positions].sort((a, b) => (a < b ? -1 : 1))).to.deep.equal(positions);
    });
  });
}

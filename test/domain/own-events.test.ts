import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandHandler } from '../../src/commands/command-handler.js';
import { accountDecider } from '../../src/domain/account/account-decider.js';
import { accountStream } from '../../src/domain/account/events.js';
import { isOwnEvent } from '../../src/domain/decider.js';
import { helpdeskDecider } from '../../src/domain/helpdesk/helpdesk-decider.js';
import { EmbeddedEventStore } from '../../src/infra/eventstore/embedded/embedded-event-store.js';
import { randomIds } from '../../src/infra/ids.js';

const clock = { now: () => new Date('2026-01-01T00:00:00Z') };
const context = { actor: { kind: 'system' as const }, correlationId: 'test' };

/** Each decider folds its own events only; the facts its stream carries beside them are skipped. */
describe('a decider and the events of its stream', () => {
  let dir: string;
  let store: EmbeddedEventStore;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'own-events-'));
    store = await EmbeddedEventStore.open({ path: dir });
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('knows its own event types, and no other', () => {
    expect(isOwnEvent(accountDecider, { type: 'ClientSecretRotated', data: {} })).to.equal(true);
    expect(isOwnEvent(accountDecider, { type: 'SignInSucceeded', data: {} })).to.equal(false);
    expect(isOwnEvent(helpdeskDecider, { type: 'HelpdeskRemoved', data: {} })).to.equal(true);
    expect(isOwnEvent(helpdeskDecider, { type: 'HelpdeskReplyReceived', data: {} })).to.equal(false);
  });

  it('the command handler folds an account stream with sign-ins between its decisions', async () => {
    const stream = accountStream('a1');
    const handler = new CommandHandler(store, randomIds, clock);
    const rotate = { type: 'RotateClientSecret' as const, data: { account_id: 'a1', client_secret_hash: 'h1' } };
    await handler.handle(stream, accountDecider, rotate, context);
    await store.append(stream, [
      { id: randomIds.uuid(), type: 'SignInSucceeded', data: { method: 'password', address: '10.0.0.1' }, metadata: {} },
      { id: randomIds.uuid(), type: 'SignInFailed', data: { method: 'password', address: '10.0.0.2' }, metadata: {} },
    ], 'any');
    await handler.handle(stream, accountDecider, rotate, context);
    // A fresh handler folds the whole stream from the start: sign-ins counted for the revision only.
    const { state, revision } = await new CommandHandler(store, randomIds, clock).load(stream, accountDecider);
    expect(state).to.deep.equal({ secretRotations: 2 });
    expect(revision).to.equal(3n);
  });
});

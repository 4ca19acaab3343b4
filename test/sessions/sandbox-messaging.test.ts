import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionEvent } from '../../src/domain/session/events.js';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import type { DocumentStore } from '../../src/infra/docstore/port.js';
import { randomIds } from '../../src/infra/ids.js';
import { Conversations } from '../../src/sessions/sandbox/conversations.js';
import type { SandboxConnection } from '../../src/sessions/sandbox/connection.js';
import type { Groups } from '../../src/sessions/sandbox/groups.js';
import { OfflineMessages } from '../../src/sessions/sandbox/offline.js';
import { Messaging } from '../../src/sessions/sandbox/messaging.js';
import type { Phones } from '../../src/sessions/sandbox/phones.js';
import type { Registry } from '../../src/sessions/sandbox/registry.js';
import { SandboxState, type PhoneDoc } from '../../src/sessions/sandbox/state.js';
import { waitFor } from '../support/sandbox.js';

describe('sandbox messaging: a message is stored, then handed on', () => {
  let dir: string;
  let docs: EmbeddedDocumentStore;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sandbox-messaging-'));
    docs = await EmbeddedDocumentStore.open({ path: dir });
  });
  afterEach(async () => {
    await docs.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('is readable before the instance hears of it, and answered only once it is on disk', async () => {
    let releaseFlush!: () => void;
    let flushes = 0;
    // The store's fsync is held until the test lets it go.
    const held: DocumentStore = Object.assign(Object.create(docs) as DocumentStore, {
      flush: async () => {
        flushes++;
        await new Promise<void>((resolve) => (releaseFlush = resolve));
        await docs.flush();
      },
    });
    const state = new SandboxState(held);
    const conversations = new Conversations(state);
    const heard: { event: SessionEvent; stored: boolean }[] = [];
    const connection = {
      deliverTaken: async (events: SessionEvent[]) => {
        for (const event of events) {
          const id = (event.data as { message: { id: string } }).message.id;
          heard.push({ event, stored: (await conversations.known('5511900000002', id)) !== null });
        }
        return true;
      },
    } as unknown as SandboxConnection;
    const registry = { connectedFor: (phone: string) => (phone === '5511900000002' ? connection : undefined) } as unknown as Registry;
    const messaging = new Messaging(state, {} as Phones, {} as Groups, conversations, registry, randomIds, { now: () => new Date() }, new OfflineMessages(state, {} as Phones, registry));
    const sender = { _id: '5511900000001', account_id: 'acc', push_name: 'Alice' } as PhoneDoc;

    let answered = false;
    const sent = messaging.send(sender, { recipients: ['5511900000002'] }, { type: 'text', text: 'hi' }, 'phone').then(() => (answered = true));
    // Wait for the event itself, not a fixed 250 ms: a loaded machine can take longer to get there.
    await waitFor(() => heard.length > 0, 'the recipient hears of the message', 10_000);
    expect(heard).to.have.length(1);
    expect(heard[0]!.event.type).to.equal('MessageReceived');
    expect(heard[0]!.stored, 'readable when the instance hears of it').to.equal(true);
    expect(flushes).to.equal(1);
    await new Promise((r) => setTimeout(r, 20));
    expect(answered, 'not answered before the disk has it').to.equal(false);
    releaseFlush();
    await sent;
    expect(answered).to.equal(true);
  });
});

import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBackends, type Backends } from '../../src/infra/backends.js';
import { loadConfig } from '../../src/infra/config/config.js';
import { MESSAGES, messageDocId, orderOf } from '../../src/projections/messages/message-doc.js';
import { messagesProjection } from '../../src/projections/messages/messages-projection.js';
import { rekeyedId } from '../../src/projections/messages/rekey-old-layout.js';
import { testBackendsFor } from '../support/gateway.js';

// The layout stored before by_chat: `<instance>|<chat>|<time>.<position>.<index>`, fixed widths.
const pad = (n: number | bigint, width: number) => n.toString(36).padStart(width, '0');
const oldOrder = (timeS: number, position: bigint, index: number) => `${pad(timeS, 7)}.${pad(position, 13)}.${pad(index, 3)}`;

describe('messages read model stored in the old _id layout', function () {
  this.timeout(60_000);
  let dir: string;
  let backends: Backends;
  const instance = '2f1c1c9e-5b3a-4a53-9d1e-1f8b2e7f0a11';
  const alice = '5511988887777@s.whatsapp.net';
  const bob = '5511977776666@s.whatsapp.net';
  // Past the retention horizon: no contents, and no event left in the log to fold them from.
  const stored = [
    { chat: alice, id: 'A1', timeS: 1_700_000_000, position: 12n, index: 0, text: undefined },
    { chat: alice, id: 'A2', timeS: 1_700_000_005, position: 2n ** 60n + 7n, index: 1, text: undefined },
    { chat: bob, id: 'B1', timeS: 1_700_000_003, position: 40n, index: 0, text: 'still held' },
  ];
  const oldDoc = (m: (typeof stored)[number]) => {
    const order = oldOrder(m.timeS, m.position, m.index);
    return {
      _id: `${instance}|${m.chat}|${order}`,
      order,
      instance_id: instance,
      message_id: m.id,
      chat_jid: m.chat,
      sender_jid: m.chat,
      from_me: false,
      timestamp_ms: m.timeS * 1000,
      status: 'read',
      ...(m.text ? { text: m.text, contents: true, words: ['still', 'held'] } : {}),
    };
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'messages-old-layout-'));
    backends = await openBackends(loadConfig({ DATA_DIR: dir, ...(await testBackendsFor(dir)) }));
    const messages = backends.docs.collection(MESSAGES);
    await messages.createIndex({ name: 'by_message', keys: { instance_id: 1, message_id: 1, chat_jid: 1 }, unique: true });
    await messages.insertMany(stored.map(oldDoc));
  });
  afterEach(async () => {
    await backends.close();
    await rm(dir, { recursive: true, force: true });
  });

  const expectMoved = async () => {
    const messages = backends.docs.collection(MESSAGES);
    const all = await messages.find({}, { sort: { _id: 1 } });
    expect(all.map((d) => d._id)).to.deep.equal(
      [stored[0], stored[2], stored[1]].map((m) => messageDocId(instance, orderOf(m!.timeS, m!.position, m!.index))),
    );
    // Everything but the old order field is kept, contents included where they were still held.
    const [a1, b1, a2] = all;
    const { _id: _a, order: _o, ...oldA1 } = oldDoc(stored[0]!);
    const { _id: _b, ...restA1 } = a1!;
    expect(restA1).to.deep.equal(oldA1);
    expect(b1).to.include({ message_id: 'B1', text: 'still held', contents: true });
    expect(a2).to.include({ message_id: 'A2', status: 'read' });
    // by_message is declared again and still refuses a second copy of a message.
    let refused = false;
    await messages.insertOne({ ...a1!, _id: `${instance}|zzz` }).catch(() => (refused = true));
    expect(refused, 'a duplicate message refused by by_message').to.equal(true);
  };

  it('moves every message to the new _id in place, keeping what the log no longer holds', async () => {
    await messagesProjection.setup!(backends.docs);
    await expectMoved();
    // A second start finds nothing left to move.
    await messagesProjection.setup!(backends.docs);
    await expectMoved();
  });

  it('finishes a move a crash cut short (new copy written, old one not yet deleted)', async () => {
    const messages = backends.docs.collection(MESSAGES);
    await messages.dropIndex('by_message');
    const { order: _o, ...half } = oldDoc(stored[0]!);
    await messages.insertOne({ ...half, _id: rekeyedId(half._id)! });
    await messagesProjection.setup!(backends.docs);
    await expectMoved();
  });

  it('reads the old order back exactly, positions past 2^53 included', () => {
    for (const m of stored) expect(rekeyedId(oldDoc(m)._id)).to.equal(messageDocId(instance, orderOf(m.timeS, m.position, m.index)));
    expect(rekeyedId(`${instance}|${alice}|not-an-order`)).to.equal(null);
    expect(rekeyedId('no-bars')).to.equal(null);
  });
});

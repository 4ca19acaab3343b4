import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { RECHECK_MS, TokenRegistry } from '../../src/api/auth/token-registry.js';
import { typedEvent } from '../../src/domain/recorded.js';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import type { RecordedEvent } from '../../src/infra/eventstore/port.js';
import { AccessTokenQueries } from '../../src/projections/accounts/access-token-queries.js';
import { accessTokensProjection } from '../../src/projections/accounts/access-tokens-projection.js';

const JTI = `at_${'a'.repeat(24)}`;

/** Two nodes share one registry (the document store); each keeps its own memory of it. */
describe('the access-token registry on two nodes sharing one document store', () => {
  let dir: string;
  let docs: EmbeddedDocumentStore;
  let position = 0n;

  const fold = async (type: string, data: Record<string, unknown>) => {
    const raw: RecordedEvent = { id: `e${position}`, type, streamId: 'account-acc_1', revision: position, position: position++, data: data as RecordedEvent['data'], metadata: {}, created: new Date() };
    const typed = typedEvent(raw);
    if (!typed.ok) throw new Error(typed.reason);
    await docs.batch(accessTokensProjection.apply(typed.event));
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'token-registry-'));
    docs = await EmbeddedDocumentStore.open({ path: dir });
    await accessTokensProjection.setup?.(docs);
    await fold('SignInSucceeded', { method: 'password', address: '127.0.0.1', jti: JTI, via: 'api', user_agent: 'x', expires_at: '2999-01-01T00:00:00.000Z', generation: 0 });
  });
  afterEach(async () => {
    await docs.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a node that folds the revocation refuses at once; another refuses within RECHECK_MS, reading the shared registry', async () => {
    const here = new TokenRegistry(new AccessTokenQueries(docs));
    const there = new TokenRegistry(new AccessTokenQueries(docs));
    const t0 = 1_000_000;
    expect(await here.load(JTI, t0)).to.equal(false);
    expect(await there.load(JTI, t0)).to.equal(false);
    expect(there.revoked(JTI, t0 + 1)).to.equal(false);

    // `here` folds the revocation with its own runner; `there` has not (yet).
    const watched = here.watching(accessTokensProjection);
    const raw: RecordedEvent = { id: 'r', type: 'AccessTokenRevoked', streamId: 'account-acc_1', revision: position, position: position++, data: { jti: JTI }, metadata: {}, created: new Date() };
    const typed = typedEvent(raw);
    if (!typed.ok) throw new Error(typed.reason);
    await docs.batch(watched.apply(typed.event));
    watched.committed?.(raw.position);
    expect(here.revoked(JTI, t0 + 2), 'the folding node knows at once').to.equal(true);

    // The other node trusts what it saw for less than RECHECK_MS, then asks the shared registry.
    expect(there.revoked(JTI, t0 + RECHECK_MS - 1)).to.equal(false);
    expect(there.revoked(JTI, t0 + RECHECK_MS)).to.equal(undefined);
    expect(await there.load(JTI, t0 + RECHECK_MS)).to.equal(true);
    // Final: never active again, whatever it reads later.
    expect(there.revoked(JTI, t0 + 100 * RECHECK_MS)).to.equal(true);
  });

  it('keeps the first revocation time and never revives a token when events are applied again', async () => {
    await fold('AccessTokenRevoked', { jti: JTI });
    const first = (await new AccessTokenQueries(docs).byId(JTI))?.revoked_at;
    await new Promise((r) => setTimeout(r, 5));
    await fold('AccessTokenRevoked', { jti: JTI });
    await fold('SignInSucceeded', { method: 'password', address: '127.0.0.1', jti: JTI, via: 'api', user_agent: 'x', expires_at: '2999-01-01T00:00:00.000Z', generation: 0 });
    expect((await new AccessTokenQueries(docs).byId(JTI))?.revoked_at).to.equal(first).and.to.be.a('string');
  });
});

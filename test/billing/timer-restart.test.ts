import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/sandbox.js';

const seconds = (s: number) => String(s / 86_400);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Due times survive a restart: a transition pending while the process is down happens once, after. */
describe('billing timer across restarts', function () {
  this.timeout(40_000);
  let dataDir: string;
  let gw: TestGateway | null = null;
  const env = { TRIAL_DAYS: seconds(2), BILLING_PERIOD_DAYS: seconds(2), BILLING_GRACE_DAYS: seconds(1) };
  const start = async () => (gw = await startTestGateway(env, {}, dataDir));
  const stop = async () => {
    await gw?.stop();
    gw = null;
  };
  const typesOf = async (id: string) => (await gw!.gateway.events.readStream(`instance-${id}`)).map((e) => e.type);

  beforeEach(async () => (dataDir = await mkdtemp(join(tmpdir(), 'gw-billing-'))));
  afterEach(async () => {
    await stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('expires a trial that ended while the process was down, once, and not again at the next restart', async () => {
    const { api } = await start();
    const owner: TestAccount = await newAccount(api);
    const instance = await newInstance(api, owner);
    await stop();
    await sleep(Date.parse(instance.expired_at as string) - Date.now() + 300);

    await start();
    await waitFor(async () => (await typesOf(instance.id)).includes('TrialExpired'), 'trial expired after the restart');
    const once = await gw!.api('GET', `/instances/${instance.id}`, { token: owner.jwt });
    expect(once.body.billing_status).to.equal('EXPIRED');
    await stop();

    await start();
    await sleep(1500);
    expect((await typesOf(instance.id)).filter((t) => t === 'TrialExpired')).to.have.length(1);
  });

  it('catches up every renewal missed while down, one period at a time, and repeats none', async () => {
    const { api } = await start();
    const owner = await newAccount(api);
    const instance = await newInstance(api, owner);
    const sub = await api('POST', `/instances/${instance.id}/subscribe`, { token: owner.jwt });
    const firstEnd = Date.parse(sub.body.expired_at);
    await stop();
    // Down across two period ends (2 s each).
    await sleep(firstEnd - Date.now() + 2300);

    await start();
    await waitFor(async () => (await typesOf(instance.id)).filter((t) => t === 'SubscriptionRenewed').length >= 2, 'two renewals');
    // Each renewal is one period after the one before: none skipped, none twice.
    const ends = (await gw!.gateway.events.readStream(`instance-${instance.id}`))
      .filter((e) => e.type === 'SubscriptionRenewed')
      .map((e) => Date.parse(e.data.expired_at as string));
    expect(ends).to.deep.equal(ends.map((_, i) => firstEnd + (i + 1) * 2000));
    // The read model follows the log.
    await waitFor(async () => Date.parse((await gw!.api('GET', `/instances/${instance.id}`, { token: owner.jwt })).body.expired_at) >= (ends.at(-1) as number), 'read model caught up');
  });
});

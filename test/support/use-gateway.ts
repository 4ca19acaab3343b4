import type { Gateway, GatewayOptions } from '../../src/composition-root.js';
import { newAccount, startTestGateway, type Api, type TestAccount, type TestGateway } from './gateway.js';

/** The env a fixture starts with; a function when it names a server an earlier hook started. */
export type FixtureEnv = Record<string, string> | (() => Record<string, string>);

export interface GatewayFixture {
  /** The running gateway, readable from the first test (or later hook) on. */
  t: TestGateway;
  /** A signed-up, signed-in account on it. */
  owner: TestAccount;
}

/**
 * The set-up most suites share, said once: registers mocha hooks on the current suite that start
 * a test gateway with `env` and sign up an account before its tests, and stop the gateway after
 * them. Declare it first in the `describe`, so the suite's own `before` hooks run after it and
 * can use the gateway. What it answers are views that read the live gateway and account, so the
 * suite's code keeps reading `t.api`, `owner.jwt` as it did:
 *
 *   const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' });
 */
export function useGateway(env: FixtureEnv = {}, options: GatewayOptions = {}): GatewayFixture {
  let gateway: TestGateway | undefined;
  let account: TestAccount | undefined;
  before(async function () {
    // A gateway's start (stores opened, projections caught up) and a sign-up take seconds on a
    // busy machine, more than mocha's 20 s when the CI runs files side by side on 2 cores.
    this.timeout(Math.max(this.timeout(), 120_000));
    gateway = await startTestGateway(typeof env === 'function' ? env() : env, options);
    account = await newAccount(gateway.api);
  });
  after(async () => {
    await gateway?.stop();
    gateway = account = undefined;
  });
  const running = (): TestGateway => gateway ?? notYet('gateway');
  const signedUp = (): TestAccount => account ?? notYet('account');
  const t: TestGateway = {
    get gateway(): Gateway {
      return running().gateway;
    },
    get dataDir(): string {
      return running().dataDir;
    },
    get api(): Api {
      return running().api;
    },
    stop: () => running().stop(),
  };
  // Read and written through: a suite may keep a fresh token on it (owner.jwt = ...).
  const owner = {} as TestAccount;
  for (const key of ACCOUNT_FIELDS) {
    Object.defineProperty(owner, key, { get: () => signedUp()[key], set: (value: string) => (signedUp()[key] = value), enumerable: true });
  }
  return { t, owner };
}

/** Every field of a TestAccount, so the view forwards each one. */
const ACCOUNT_FIELDS = ['accountId', 'email', 'password', 'clientToken', 'clientSecret', 'jwt'] as const satisfies readonly (keyof TestAccount)[];

/** A suite read the fixture outside its tests and hooks (at describe time, or after `after`). */
function notYet(what: string): never {
  throw new Error(`the test ${what} is not running: read it inside a test or a hook declared after useGateway()`);
}

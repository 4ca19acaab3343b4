import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { WEB_APP_DIST } from '../../src/api/routes/web-app.js';
import { useGateway, type FixtureEnv, type GatewayFixture } from '../support/use-gateway.js';

/** Debian's chromium (.ci/run installs it); Playwright's own browser download is not used. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Gitignored (.tmp): screenshots of each page, for a person to review. */
export const SCREENSHOTS = join(process.cwd(), '.tmp', 'test-output', 'web');

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(join(WEB_APP_DIST, 'index.html'))) {
    throw new Error('the web app is not built: run `npm run build:web` (npm test does)');
  }
  if (!existsSync(CHROMIUM)) throw new Error(`no browser at ${CHROMIUM}: apt-get install -y chromium (.ci/run does)`);
  await mkdir(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** A phone-sized viewport: the app must be usable there. */
export const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true };
export const DESKTOP = { viewport: { width: 1100, height: 800 } };

/** A browser with one page of the given size (PHONE or DESKTOP). */
export async function openApp(viewport: typeof PHONE | typeof DESKTOP): Promise<{ browser: Browser; context: BrowserContext; page: Page }> {
  const browser = await launchBrowser();
  const context = await browser.newContext(viewport);
  return { browser, context, page: await context.newPage() };
}

/** Signs the account in through the app's sign-in page, and waits for its instance list. */
export async function signIn(page: Page, baseUrl: string, account: { email: string; password: string }): Promise<void> {
  await page.goto(`${baseUrl}/app/sign-in`);
  await page.getByLabel('E-mail').fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByLabel('Password').press('Enter');
  await page.getByRole('heading', { name: 'Instances', level: 1 }).waitFor();
}

export interface SignedInApp extends GatewayFixture {
  /** The app's page, signed in as `owner`, on its instance list; readable from the first test on. */
  page: Page;
  /** The page's browser context (its cookies). */
  context: BrowserContext;
}

/**
 * The set-up the browser suites share: a test gateway with `env` and an account on it (as
 * useGateway), a browser of the given size, and the account signed in through the app. Declare it
 * first in the `describe`. The browser closes before the gateway stops, so the page's open
 * connections (its live stream) end first.
 */
export function useSignedInApp(env: FixtureEnv = {}, viewport: typeof PHONE | typeof DESKTOP = DESKTOP): SignedInApp {
  let opened: { browser: Browser; context: BrowserContext; page: Page } | undefined;
  after(async () => {
    await opened?.context.close();
    await opened?.browser.close();
    opened = undefined;
  });
  const { t, owner } = useGateway(env);
  before(async () => {
    opened = await openApp(viewport);
    await signIn(opened.page, t.gateway.url, owner);
  });
  const live = (): { context: BrowserContext; page: Page } => opened ?? notOpen();
  return { t, owner, page: liveView(() => live().page), context: liveView(() => live().context) };
}

function notOpen(): never {
  throw new Error('the app is read outside its tests (before `before` or after `after`)');
}

/** An object that forwards every read to the one `current` answers now; methods stay bound to it. */
function liveView<T extends object>(current: () => T): T {
  return new Proxy({} as T, {
    get(_, key) {
      const target = current();
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

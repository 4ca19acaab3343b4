import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

describe('web: /app files', function () {
  this.timeout(20_000);
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway();
  });
  after(async () => t.stop());

  it('answers every page path with the app, under a same-origin CSP and no external address', async () => {
    for (const path of ['/app', '/app/', '/app/sign-in', '/app/instances/3EABC']) {
      const res = await t.api('GET', path);
      expect(res.status, path).to.equal(200);
      expect(res.headers.get('content-type'), path).to.match(/^text\/html/);
      expect(res.headers.get('content-security-policy'), path).to.include("script-src 'self'");
      expect(res.headers.get('cache-control'), path).to.equal('no-cache');
      expect(res.text, path).to.include('<div id="app">').and.not.to.match(/(src|href)="https?:/);
    }
  });

  it('sends a browser at the root address to the app', async () => {
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(`${t.gateway.url}/`, { method, redirect: 'manual', headers: { accept: 'text/html' } });
      expect(res.status, method).to.equal(302);
      expect(res.headers.get('location'), method).to.equal('/app');
    }
    const followed = await fetch(`${t.gateway.url}/`);
    expect(followed.status).to.equal(200);
    expect(await followed.text()).to.include('<div id="app">');
  });

  it('serves the built assets, cached for good since their names carry their hash', async () => {
    const index = await t.api('GET', '/app');
    const assets = [...index.text.matchAll(/(?:src|href)="(\/app\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
    expect(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css'))).to.equal(true);
    for (const path of assets) {
      const res = await t.api('GET', path);
      expect(res.status, path).to.equal(200);
      expect(res.headers.get('cache-control'), path).to.include('immutable');
    }
  });

  it('tells the app which network is in use (no sandbox simulator on the real one)', async () => {
    const res = await t.api('GET', '/app/settings');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ network: 'baileys' });
  });

  it('answers a missing asset and writes to page paths with the JSON 404, not the app', async () => {
    const missing = await t.api('GET', '/app/assets/nothing.js');
    expect(missing.status).to.equal(404);
    expect(missing.body.error.type).to.equal('not_found');
    const write = await t.api('POST', '/app/instances', { body: {} });
    expect(write.status).to.equal(404);
  });
});

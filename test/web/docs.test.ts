import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

describe('web: /docs (Swagger UI from node_modules)', function () {
  this.timeout(20_000);
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway();
  });
  after(async () => t.stop());

  it('serves the UI page reading /openapi.json, with no external address', async () => {
    const res = await t.api('GET', '/docs');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    expect(res.text).to.include('/docs/assets/swagger-ui-bundle.js');
    expect(res.text).not.to.match(/https?:\/\//);
    const init = await t.api('GET', '/docs/assets/docs-init.js');
    expect(init.status).to.equal(200);
    expect(init.text).to.include("url: '/openapi.json'").and.to.include('tryItOutEnabled: true');
  });

  it('serves every asset the page loads, with its type and a same-origin CSP', async () => {
    const res = await t.api('GET', '/docs');
    const assets = [...res.text.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
    expect(assets).to.have.length.greaterThan(2);
    for (const path of assets) {
      const asset = await t.api('GET', path);
      expect(asset.status, path).to.equal(200);
      expect(asset.headers.get('content-type'), path).to.match(/^(text\/css|text\/javascript|image\/png)/);
      expect(asset.headers.get('content-security-policy'), path).to.include("default-src 'self'");
      expect(asset.headers.get('x-content-type-options'), path).to.equal('nosniff');
    }
    const bundle = await t.api('GET', '/docs/assets/swagger-ui-bundle.js');
    expect(bundle.text).to.include('SwaggerUIBundle');
  });

  it('serves nothing else of the package, and no path escapes the served set', async () => {
    for (const path of ['/docs/assets/package.json', '/docs/assets/../../package.json', '/docs/assets/%2e%2e%2fpackage.json', '/app/../package.json']) {
      const res = await t.api('GET', path);
      expect(res.status, path).to.equal(404);
    }
  });

  it('lets the API browser authorize with a Bearer JWT (the document declares the scheme)', async () => {
    const doc = await t.api('GET', '/openapi.json');
    expect(doc.body.components.securitySchemes.bearer).to.deep.equal({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  });
});

/**
 * The API browser: Swagger UI from node_modules (no CDN, so it works on a closed network), with
 * try-it-out and the document's security schemes. Its assets are served by `web-app.ts` under
 * `/docs/assets/`; the start-up script is a file too, so the page runs under a CSP without inline
 * scripts.
 */
export const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Gateway API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head><body><div id="swagger-ui"></div>
<noscript>This page needs JavaScript; the API document itself is <a href="/openapi.json">/openapi.json</a>.</noscript>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/docs-init.js"></script>
</body></html>`;

/** Reads the gateway's own document; tokens typed in "Authorize" stay in the page's memory only. */
export const DOCS_INIT_SCRIPT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  tryItOutEnabled: true,
  persistAuthorization: false,
  displayRequestDuration: true,
  presets: [SwaggerUIBundle.presets.apis],
});
`;

/** A self-contained API browser: no CDN, so it works on a closed network too. */
export const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Gateway API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.5 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:16px 24px}h1{margin:0;font-size:20px}
main{max-width:1100px;margin:0 auto;padding:16px 24px}h2{margin:28px 0 8px;font-size:17px}
details{background:#fff;border:1px solid #dde1e7;border-radius:6px;margin:6px 0}
summary{cursor:pointer;padding:8px 12px;display:flex;gap:12px;align-items:center}
.m{font:600 12px monospace;text-transform:uppercase;padding:2px 8px;border-radius:4px;color:#fff;min-width:52px;text-align:center}
.get{background:#2f7d32}.post{background:#1565c0}.put{background:#8d6e00}.patch{background:#6a1b9a}.delete{background:#b71c1c}
code,pre{font-family:ui-monospace,monospace}pre{background:#f0f2f5;padding:10px;overflow:auto;margin:6px 12px 12px;border-radius:4px}
.s{color:#5b6475}h3{margin:8px 12px 0;font-size:13px}
</style></head><body><header><h1 id="title">Gateway API</h1></header><main id="root">Loading…</main>
<script>
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
const block = (title, value) => value ? '<h3>' + esc(title) + '</h3><pre>' + esc(JSON.stringify(value, null, 2)) + '</pre>' : '';
fetch('openapi.json').then((r) => r.json()).then((doc) => {
  document.getElementById('title').textContent = doc.info.title + ' ' + doc.info.version;
  const groups = {};
  for (const [path, ops] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(ops)) {
    (groups[op.tags[0]] ??= []).push({ path, method, op });
  }
  let html = '';
  for (const [tag, list] of Object.entries(groups)) {
    html += '<h2>' + esc(tag) + '</h2>';
    for (const { path, method, op } of list) {
      html += '<details><summary><span class="m ' + method + '">' + method + '</span><code>' + esc(path) + '</code><span class="s">' + esc(op.summary) + '</span></summary>'
        + block('Parameters', op.parameters.length ? op.parameters : null)
        + block('Request body', op.requestBody && op.requestBody.content['application/json'].schema)
        + block('Responses', op.responses) + '</details>';
    }
  }
  for (const [name, hook] of Object.entries(doc.webhooks || {})) {
    html += (html.includes('<h2>Webhook events') ? '' : '<h2>Webhook events</h2>')
      + '<details><summary><span class="m post">event</span><code>' + esc(name) + '</code><span class="s">' + esc(hook.post.summary) + '</span></summary>'
      + block('Body', hook.post.requestBody.content['application/json'].schema) + '</details>';
  }
  document.getElementById('root').innerHTML = html;
});
</script></body></html>`;

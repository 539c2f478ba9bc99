// A readable API reference at /api/docs that works offline: one self-contained page that renders
// /api/openapi.json in the browser (no CDN, so air-gapped installs get it too). Its inline style and script
// are allowed by their hashes and nothing else is (Content-Security-Policy), as on the dashboard.
import { createHash } from "node:crypto";

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Quarry API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2329;background:#fafbfc}
main{max-width:980px;margin:0 auto;padding:24px}
h1{margin:0 0 4px}h2{margin-top:40px;border-bottom:1px solid #dde2e6;padding-bottom:4px}
.op{background:#fff;border:1px solid #dde2e6;border-radius:8px;margin:12px 0;padding:12px 16px}
.m{display:inline-block;min-width:64px;font-weight:700;font-family:ui-monospace,monospace}
.get{color:#0a7d32}.post{color:#0b5cad}.put{color:#8a5a00}.patch{color:#7a3fb0}.delete{color:#b3261e}
code,pre{font-family:ui-monospace,monospace;font-size:13px}pre{background:#f3f5f7;padding:8px;border-radius:6px;overflow:auto}
details summary{cursor:pointer;color:#44505c}.desc p{margin:8px 0}.desc ul{margin:4px 0;padding-left:22px}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #dde2e6;padding:3px 8px;text-align:left}
</style></head><body><main><h1>Quarry API</h1><p id="intro">Loading <a href="/api/openapi.json">openapi.json</a>…</p><div id="ops"></div></main>
<script>
const esc = (s) => String(s ?? "").replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]);
const json = (v) => "<pre>" + esc(JSON.stringify(v, null, 2)) + "</pre>";
// The descriptions' markdown, the little they use: paragraphs, "- " lists (an item's further lines indented),
// pipe tables, **bold** and \`code\` (escaped first, so only these become tags). Lines are reflowed.
const inline = (s) => esc(s).replace(/\\*\\*([^*]+)\\*\\*/g, "<strong>$1</strong>").replace(/\`([^\`]+)\`/g, "<code>$1</code>");
const cells = (row) => row.trim().replace(/^[|]|[|]$/g, "").split("|").map((cell) => cell.trim());
const table = (rows) => "<table><tr>" + cells(rows[0]).map((c) => "<th>" + inline(c) + "</th>").join("") + "</tr>" +
  rows.slice(2).map((row) => "<tr>" + cells(row).map((c) => "<td>" + inline(c) + "</td>").join("") + "</tr>").join("") + "</table>";
const md = (text) => {
  const blocks = [];
  for (const line of String(text ?? "").split("\\n")) {
    const last = blocks[blocks.length - 1];
    const kind = line.trim() === "" ? "gap" : line.startsWith("|") ? "table" : line.startsWith("- ") ? "item" : last && last.kind === "item" && line.startsWith("  ") ? "more" : "text";
    if (kind === "gap") blocks.push({ kind, lines: [] });
    else if (kind === "more") last.lines.push(line.trim());
    else if (last && last.kind === kind && kind !== "item") last.lines.push(line);
    else blocks.push({ kind, lines: [kind === "item" ? line.slice(2) : line] });
  }
  let html = "";
  blocks.forEach((block, i) => {
    const before = blocks[i - 1];
    if (block.kind === "item" && !(before && before.kind === "item")) html += "<ul>";
    if (block.kind === "item") html += "<li>" + inline(block.lines.join(" ")) + "</li>";
    if (block.kind === "item" && !(blocks[i + 1] && blocks[i + 1].kind === "item")) html += "</ul>";
    if (block.kind === "table") html += table(block.lines);
    if (block.kind === "text") html += "<p>" + inline(block.lines.join(" ")) + "</p>";
  });
  return html;
};
fetch("/api/openapi.json").then((r) => r.json()).then((spec) => {
  document.getElementById("intro").innerHTML = '<div class="desc">' + md(spec.info.description) + '</div><p>Version ' + esc(spec.info.version) + ' · <a href="/api/openapi.json">openapi.json</a></p>';
  const byTag = {};
  for (const [path, ops] of Object.entries(spec.paths)) for (const [method, op] of Object.entries(ops)) {
    const tag = (op.tags && op.tags[0]) || "Other";
    (byTag[tag] ||= []).push({ path, method, op });
  }
  let html = "";
  for (const [tag, ops] of Object.entries(byTag)) {
    html += "<h2>" + esc(tag) + "</h2>";
    for (const { path, method, op } of ops) {
      html += '<div class="op"><span class="m ' + method + '">' + method.toUpperCase() + "</span> <code>" + esc(path) + "</code> — " + esc(op.summary);
      if (op.description) html += '<div class="desc">' + md(op.description) + "</div>";
      if (op.parameters && op.parameters.length) html += "<details><summary>Parameters</summary>" + json(op.parameters.map((p) => ({ in: p.in, name: p.name, required: p.required, schema: p.schema, description: p.description }))) + "</details>";
      if (op.requestBody) html += "<details><summary>Request body</summary>" + json(op.requestBody.content) + "</details>";
      html += "<details><summary>Responses</summary>" + json(op.responses) + "</details></div>";
    }
  }
  document.getElementById("ops").innerHTML = html;
});
</script></body></html>`;

/** The CSP source that allows exactly the page's one inline `tag` element. */
function inlineHash(tag: "script" | "style"): string {
  const body = PAGE.slice(PAGE.indexOf(`<${tag}>`) + tag.length + 2, PAGE.indexOf(`</${tag}>`));
  return `'sha256-${createHash("sha256").update(body).digest("base64")}'`;
}

const CONTENT_SECURITY_POLICY =
  `default-src 'none'; script-src ${inlineHash("script")}; style-src ${inlineHash("style")}; connect-src 'self'; ` +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function docsPage() {
  return new Response(PAGE, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": CONTENT_SECURITY_POLICY,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    },
  });
}

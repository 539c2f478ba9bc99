// The dashboard's HTML: every view and form is here, hidden until the script (app.client.js) shows it
// and fills in the data, so labels and structure exist without JavaScript-built markup.

const SUPPORTED_EXTENSIONS = ".pdf,.docx,.pptx,.xlsx,.png,.jpg,.jpeg,.webp,.tiff,.txt,.md,.html,.htm,.csv,.tsv,.json";

const FILTER_EXAMPLE = '{"team": {"$eq": "support"}, "year": {"$gte": 2024}}';

export const DASHBOARD_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Quarry</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/styles.css">
<script type="module" src="/dashboard/app.js"></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<noscript><p class="noscript">The Quarry dashboard needs JavaScript. The API itself is documented at /api/docs.</p></noscript>

<main id="auth-view" class="auth" hidden>
  <div class="auth-card">
    <p class="brand brand-large"><span class="brand-mark" aria-hidden="true">Q</span>Quarry</p>
    <p class="muted">Knowledge-base retrieval on your own machine.</p>
    <div class="segmented" role="tablist" aria-label="Account">
      <button type="button" role="tab" id="tab-signin" aria-controls="signin-form" aria-selected="true">Sign in</button>
      <button type="button" role="tab" id="tab-signup" aria-controls="signup-form" aria-selected="false" tabindex="-1">Create account</button>
    </div>
    <p class="notice" id="auth-notice" role="status" hidden></p>
    <form id="signin-form" role="tabpanel" aria-labelledby="tab-signin" class="stack" novalidate>
      <label>Email <input name="email" type="email" autocomplete="username" required maxlength="256"></label>
      <label>Password <input name="password" type="password" autocomplete="current-password" required maxlength="128"></label>
      <div class="error" role="alert" data-error hidden></div>
      <button type="submit" class="primary">Sign in</button>
    </form>
    <form id="signup-form" role="tabpanel" aria-labelledby="tab-signup" class="stack" novalidate hidden>
      <label>Name <span class="optional">optional</span><input name="name" autocomplete="name" maxlength="256"></label>
      <label>Email <input name="email" type="email" autocomplete="username" required maxlength="256"></label>
      <label>Password <span class="optional">8–128 characters</span><input name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="128"></label>
      <div class="error" role="alert" data-error hidden></div>
      <button type="submit" class="primary">Create account</button>
      <p class="hint">A 7-day trial with no card. You get an API key once, right after signing up.</p>
    </form>
  </div>
</main>

<div id="app-view" hidden>
  <header class="topbar">
    <div class="topbar-inner">
      <a class="brand" href="#/knowledge-bases"><span class="brand-mark" aria-hidden="true">Q</span>Quarry</a>
      <nav class="mainnav" aria-label="Main">
        <a href="#/knowledge-bases" data-nav="knowledge-bases">Knowledge bases</a>
        <a href="#/usage" data-nav="usage">Usage</a>
        <a href="#/requests" data-nav="requests">Requests</a>
        <a href="#/account" data-nav="account">Account</a>
      </nav>
      <div class="who">
        <span id="account-email" class="muted"></span>
        <button type="button" id="sign-out" class="small">Sign out</button>
      </div>
    </div>
  </header>

  <main id="main" class="content" tabindex="-1">
    <div id="toast" class="toast" role="status" aria-live="polite" hidden></div>

    <section id="view-knowledge-bases" data-view hidden aria-labelledby="kbs-title">
      <div class="page-head"><h1 id="kbs-title">Knowledge bases</h1></div>
      <form id="kb-create-form" class="card" novalidate>
        <h2>New knowledge base</h2>
        <div class="grid">
          <label>Name <input name="name" required maxlength="256" placeholder="Support articles"></label>
          <label>Description <span class="optional">optional</span><input name="description" maxlength="1024"></label>
        </div>
        <div class="error" role="alert" data-error hidden></div>
        <div class="actions"><button type="submit" class="primary">Create knowledge base</button></div>
      </form>
      <div class="card flush">
        <table class="table">
          <thead><tr><th scope="col">Name</th><th scope="col" class="num">Documents</th><th scope="col">Created</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody id="kb-items"></tbody>
        </table>
        <p id="kb-empty" class="empty" hidden>No knowledge bases yet. Create one above.</p>
        <div class="error" role="alert" id="kb-list-error" hidden></div>
        <div class="more"><button type="button" id="kb-more" hidden>Load more</button></div>
      </div>
    </section>

    <section id="view-knowledge-base" data-view hidden aria-labelledby="kb-name">
      <nav class="crumbs" aria-label="Breadcrumb"><a href="#/knowledge-bases">Knowledge bases</a><span aria-hidden="true">/</span><span id="kb-crumb" aria-current="page"></span></nav>
      <div class="page-head">
        <div>
          <h1 id="kb-name">Knowledge base</h1>
          <p id="kb-description" class="muted"></p>
          <p class="meta-line"><code id="kb-id"></code><span id="kb-count"></span></p>
        </div>
        <div class="actions"><button type="button" id="kb-edit">Edit</button><button type="button" id="kb-delete" class="danger">Delete knowledge base</button></div>
      </div>
      <div class="error" role="alert" id="kb-error" hidden></div>
      <form id="kb-edit-form" class="card" novalidate hidden>
        <h2>Edit knowledge base</h2>
        <label>Name <input name="name" maxlength="256" required></label>
        <label>Description <span class="optional">optional</span><input name="description" maxlength="1024"></label>
        <label>Metadata <span class="optional">JSON object; replaces the current one</span><textarea name="metadata" rows="3" class="mono" spellcheck="false"></textarea></label>
        <div class="error" role="alert" data-error hidden></div>
        <div class="actions"><button type="button" id="kb-edit-cancel">Cancel</button><button type="submit" class="primary">Save</button></div>
      </form>
      <nav id="kb-tabs" class="tabs" aria-label="Knowledge base">
        <a id="tab-documents" href="#">Documents</a>
        <a id="tab-search" href="#">Search playground</a>
      </nav>

      <div id="panel-documents" class="panel">
        <div class="columns">
          <form id="upload-form" class="card" novalidate>
            <h2>Upload files</h2>
            <label>Files <input name="files" type="file" multiple required accept="${SUPPORTED_EXTENSIONS}"></label>
            <p class="hint">PDF, DOCX, PPTX, XLSX, images (PNG, JPG, WEBP, TIFF), TXT, MD, HTML, CSV, TSV, JSON; up to 50 MB each.</p>
            <label>Metadata <span class="optional">optional JSON object, applied to each file</span><textarea name="metadata" rows="2" class="mono" spellcheck="false" placeholder='{"team": "support"}'></textarea></label>
            <p id="upload-progress" class="hint" role="status"></p>
            <div class="error" role="alert" data-error hidden></div>
            <div class="actions"><button type="submit" class="primary">Upload</button></div>
          </form>
          <form id="text-form" class="card" novalidate>
            <h2>Add text</h2>
            <label>Name <span class="optional">optional</span><input name="name" maxlength="256" placeholder="text-&lt;timestamp&gt;.txt"></label>
            <label>Text <textarea name="text" rows="4" required></textarea></label>
            <label>Metadata <span class="optional">optional JSON object</span><textarea name="metadata" rows="2" class="mono" spellcheck="false" placeholder='{"source": "wiki"}'></textarea></label>
            <div class="error" role="alert" data-error hidden></div>
            <div class="actions"><button type="submit" class="primary">Add text</button></div>
          </form>
        </div>
        <div class="card flush">
          <div class="card-head">
            <h2>Documents</h2>
            <span id="doc-live" class="live" role="status"></span>
            <label class="inline">Status
              <select id="doc-status">
                <option value="">All</option><option>pending</option><option>parsing</option><option>chunking</option><option>embedding</option><option>ready</option><option>failed</option>
              </select>
            </label>
          </div>
          <table class="table">
            <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col" class="num">Pages</th><th scope="col" class="num">Chunks</th><th scope="col" class="num">Size</th><th scope="col">Updated</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
            <tbody id="doc-items"></tbody>
          </table>
          <p id="doc-empty" class="empty" hidden>No documents here yet. Upload a file or add some text.</p>
          <div class="error" role="alert" id="doc-list-error" hidden></div>
          <div class="more"><button type="button" id="doc-more" hidden>Load more</button></div>
        </div>
      </div>

      <div id="panel-search" class="panel" hidden>
        <form id="search-form" class="card" novalidate>
          <h2>Search playground</h2>
          <label>Query <input name="query" required maxlength="10000" placeholder="How do I reset my password?"></label>
          <div class="grid grid-4">
            <label>Mode
              <select name="mode"><option value="vector">vector</option><option value="keyword">keyword</option><option value="hybrid">hybrid</option></select>
            </label>
            <label>Alpha <span class="optional">hybrid only</span><input name="alpha" type="number" min="0" max="1" step="0.05" value="0.6" disabled></label>
            <label>Top K <input name="top_k" type="number" min="1" max="50" step="1" value="10"></label>
            <label>Score threshold <span class="optional">0–1</span><input name="score_threshold" type="number" min="0" max="1" step="0.01" placeholder="none"></label>
          </div>
          <div class="grid">
            <label>Filter <span class="optional">optional JSON on document metadata</span><textarea name="filter" rows="2" class="mono" spellcheck="false" placeholder='${FILTER_EXAMPLE}'></textarea></label>
            <label>Keyword query <span class="optional">keyword and hybrid; defaults to the query</span><input name="keyword_query" maxlength="10000" disabled></label>
          </div>
          <label class="check"><input type="checkbox" name="rerank" checked> <span id="rerank-label">Rerank with the cross-encoder (when one is installed)</span></label>
          <div class="error" role="alert" data-error hidden></div>
          <div class="actions"><button type="submit" class="primary">Search</button></div>
        </form>
        <div id="search-output" class="card" hidden>
          <div class="card-head"><h2>Results</h2><span id="search-summary" class="muted"></span></div>
          <dl id="search-usage" class="usage-list"></dl>
          <ol id="search-results" class="results"></ol>
          <p id="search-empty" class="empty" hidden>No chunk matched. Try another mode, a lower score threshold or a looser filter.</p>
        </div>
      </div>
    </section>

    <section id="view-document" data-view hidden aria-labelledby="doc-name">
      <nav class="crumbs" aria-label="Breadcrumb"><a href="#/knowledge-bases">Knowledge bases</a><span aria-hidden="true">/</span><a id="doc-kb-crumb" href="#">…</a><span aria-hidden="true">/</span><span id="doc-crumb" aria-current="page"></span></nav>
      <div class="page-head"><div><h1 id="doc-name">Document</h1><p class="meta-line"><code id="doc-id"></code></p></div><button type="button" id="doc-delete" class="danger">Delete document</button></div>
      <div class="error" role="alert" id="doc-error" hidden></div>
      <div class="card"><dl id="doc-facts" class="facts"></dl></div>
      <form id="doc-meta-form" class="card" novalidate>
        <h2>Metadata</h2>
        <label>Metadata <span class="optional">JSON object; search filters match it at once</span><textarea name="metadata" rows="3" class="mono" spellcheck="false"></textarea></label>
        <div class="error" role="alert" data-error hidden></div>
        <div class="actions"><button type="submit" class="primary">Save metadata</button></div>
      </form>
      <div class="card">
        <div class="card-head"><h2>Chunks</h2><span id="chunk-live" class="live" role="status"></span></div>
        <ol id="chunk-items" class="chunks"></ol>
        <p id="chunk-empty" class="empty" hidden>No chunks yet.</p>
        <div class="error" role="alert" id="chunk-list-error" hidden></div>
        <div class="more"><button type="button" id="chunk-more" hidden>Load more</button></div>
      </div>
    </section>

    <section id="view-usage" data-view hidden aria-labelledby="usage-title">
      <div class="page-head"><div><h1 id="usage-title">Usage</h1><p id="usage-period" class="muted"></p></div></div>
      <div class="error" role="alert" id="usage-error" hidden></div>
      <div class="grid">
        <div class="card meter-card" id="usage-pages"><h2>Pages processed</h2></div>
        <div class="card meter-card" id="usage-queries"><h2>Search queries</h2></div>
      </div>
    </section>

    <section id="view-requests" data-view hidden aria-labelledby="requests-title">
      <div class="page-head"><h1 id="requests-title">Request history</h1></div>
      <form id="request-filters" class="card filters" novalidate>
        <fieldset class="radio-field">
          <legend>Credential</legend>
          <div class="radio-row">
            <label><input type="radio" name="auth_type" value="api_key" checked> API key</label>
            <label><input type="radio" name="auth_type" value="jwt"> Dashboard (JWT)</label>
          </div>
        </fieldset>
        <label>Status
          <select name="status"><option value="">All</option><option value="2xx">2xx success</option><option value="4xx">4xx client error</option><option value="5xx">5xx server error</option></select>
        </label>
        <label>Path contains <input name="path" maxlength="1024" placeholder="/search"></label>
        <div class="actions"><button type="submit">Refresh</button></div>
      </form>
      <div class="card flush">
        <table class="table">
          <thead><tr><th scope="col">Time</th><th scope="col">Method</th><th scope="col">Path</th><th scope="col" class="num">Status</th><th scope="col" class="num">Duration</th></tr></thead>
          <tbody id="request-items"></tbody>
        </table>
        <p id="request-empty" class="empty" hidden>No requests match these filters. Calls made with the API key are listed under “API key”; this dashboard's own calls under “Dashboard (JWT)”.</p>
        <div class="error" role="alert" id="request-list-error" hidden></div>
        <div class="more"><button type="button" id="request-more" hidden>Load more</button></div>
      </div>
    </section>

    <section id="view-account" data-view hidden aria-labelledby="account-title">
      <div class="page-head"><h1 id="account-title">Account</h1></div>
      <div class="error" role="alert" id="account-error" hidden></div>
      <div class="card"><dl id="account-facts" class="facts"></dl></div>
      <div class="card">
        <h2>API key</h2>
        <p>Applications authenticate with <code>Authorization: Bearer &lt;API key&gt;</code> on <code>/api/v1</code>. Quarry keeps only a hash of the key, so it cannot be shown again. Regenerating creates a new key and the current one stops working immediately.</p>
        <div class="error" role="alert" id="regenerate-error" hidden></div>
        <div class="actions"><button type="button" id="regenerate-key" class="danger">Regenerate API key</button></div>
      </div>
    </section>
  </main>
</div>

<dialog id="key-dialog" aria-labelledby="key-dialog-title">
  <h2 id="key-dialog-title">Your API key</h2>
  <p id="key-note" hidden></p>
  <p class="warning"><strong>This key is shown only once.</strong> Copy it now and store it somewhere safe: Quarry keeps only a hash and cannot show it again.</p>
  <label for="key-value">API key</label>
  <div class="copy-row">
    <input id="key-value" class="mono" readonly>
    <button type="button" id="key-copy">Copy</button>
  </div>
  <p id="key-copy-status" class="hint" role="status"></p>
  <div class="actions"><button type="button" id="key-done" class="primary">I have saved my key</button></div>
</dialog>
</body>
</html>
`;

// Quarry dashboard: a hash-routed page over the public JSON API under /api. Runs in the browser as it is
// (no build step). Every call carries the dashboard JWT, kept in sessionStorage, as Authorization: Bearer.

const TOKEN_KEY = "quarry.dashboard.token";
const ACCOUNT_KEY = "quarry.dashboard.account";
/** The sign-in page's notice, kept across the page load that signing out makes. */
const NOTICE_KEY = "quarry.dashboard.notice";
const PROCESSING = ["pending", "parsing", "chunking", "embedding"];
const POLL_MS = 2000;
const PAGE_SIZE = 20;
const MAX_PAGE_SIZE = 100;
/**
 * A trial account may make 5 requests per second; a refused call is retried after Retry-After when that
 * is a moment away. A longer wait (failed sign-ins locked for a minute) is shown at once, not sat out.
 */
const RATE_LIMIT_RETRIES = 3;
const RETRY_AFTER_MAX_SECONDS = 2;

// ---------------------------------------------------------------- DOM and formatting helpers

const byId = (id) => document.getElementById(id);

/** Creates an element: props become attributes (on* become listeners); children are nodes or text. */
/** A name as a link's or heading's text: one of spaces only (the API takes it) would leave nothing to click. */
const displayName = (name) => (name.trim() === "" ? "(blank name)" : name);

function h(tag, props, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false || child === "") continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** A table cell labelled for the stacked layout on narrow screens (label beside the content). */
function cell(label, content, className) {
  return h("td", { "data-label": label, class: className }, h("div", { class: "cell-body" }, content));
}

/** A horizontal bar filled to `fraction` (0…1); the width is set through CSSOM, which the CSP allows. */
function fillBar(className, fraction, attributes = {}) {
  const fill = h("span");
  fill.style.width = `${Math.round(Math.min(1, Math.max(0, fraction)) * 100)}%`;
  return h("div", { class: className, ...attributes }, fill);
}

const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const preciseTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "short", timeStyle: "medium" });
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" });
const integerFormat = new Intl.NumberFormat();

const formatTime = (iso) => (iso ? dateTimeFormat.format(new Date(iso)) : "—");
const formatDate = (iso) => (iso ? dateFormat.format(new Date(iso)) : "—");
const formatCount = (n) => (n === null || n === undefined ? "—" : integerFormat.format(n));
const plural = (n, word) => `${formatCount(n)} ${word}${n === 1 ? "" : "s"}`;
const isEmptyObject = (value) => !value || Object.keys(value).length === 0;

function formatBytes(bytes) {
  if (bytes === null || bytes === undefined) return "—";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * "p. 3" or "pp. 3–5" in a span of its own (bare text beside other text in a flex row ran into it: "p. 194
 * tokens"); nothing for text-only documents, which have no start page.
 */
function formatPages(start, end) {
  if (start === null || start === undefined) return null;
  return h("span", {}, end === null || end === undefined || end === start ? `p. ${start}` : `pp. ${start}–${end}`);
}

function statusBadge(status) {
  return h("span", { class: `badge ${status}${PROCESSING.includes(status) ? " processing" : ""}` }, status);
}

/** Fills a <dl> from [label, value, wide?] rows. */
function renderFacts(list, rows) {
  list.replaceChildren(
    ...rows.map(([label, value, wide]) => h("div", { class: wide ? "wide" : null }, h("dt", {}, label), h("dd", {}, value ?? "—"))),
  );
}

let toastTimer = null;
function toast(message) {
  const element = byId("toast");
  element.textContent = message;
  element.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (element.hidden = true), 3500);
}

// ---------------------------------------------------------------- Errors

/** An error from the API ({error:{code, message, details}}) or from a check made here before calling it. */
class DashboardError extends Error {
  constructor(status, { code, message, details }) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

const localError = (message) => new DashboardError(0, { code: null, message });

function errorBlock(error) {
  const block = h(
    "div",
    {},
    error.label ? h("strong", {}, `${error.label}: `) : null,
    error.message || "Something went wrong.",
    error.code ? [" ", h("span", { class: "code" }, error.code)] : null,
  );
  // A single problem is usually the message itself; list the issues only when they add something. Other
  // details (a plan limit's figures) are in the message already.
  const issues = error.details?.issues;
  if (Array.isArray(issues) && !issues.every((issue) => error.message?.includes(issue.message))) {
    block.append(h("ul", {}, issues.map((issue) => h("li", {}, `${issue.path?.length ? `${issue.path.join(".")}: ` : ""}${issue.message}`))));
  }
  return block;
}

/** Shows one error or a list of them in an inline alert box; null hides the box. */
function showError(box, error) {
  box.replaceChildren(...(error ? [error].flat().map(errorBlock) : []));
  box.hidden = !error;
}

/** Checks that a text field holds a JSON object (blank means none); `example` is shown when it does not. */
function parseJsonObject(text, label, example = '{"key": "value"}') {
  if (!text || !text.trim()) return undefined;
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw localError(`${label} is not valid JSON (${error.message}).`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw localError(`${label} must be a JSON object, like ${example}.`);
  }
  return value;
}

// ---------------------------------------------------------------- Session and API

const session = {
  token: () => sessionStorage.getItem(TOKEN_KEY),
  account() {
    try {
      return JSON.parse(sessionStorage.getItem(ACCOUNT_KEY) ?? "null");
    } catch {
      return null;
    }
  },
  save(token, account) {
    sessionStorage.setItem(TOKEN_KEY, token);
    sessionStorage.setItem(ACCOUNT_KEY, JSON.stringify(account));
  },
  clear() {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(ACCOUNT_KEY);
  },
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Calls the API and returns the parsed body, or throws a DashboardError carrying the API's error.
 * `body` is sent as JSON, `form` as multipart; `auth: false` for signup and login.
 */
async function api(method, path, { body, form, query, auth = true } = {}) {
  const url = new URL(`/api${path}`, location.origin);
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(key, String(value));
  }
  const headers = {};
  if (auth) headers.authorization = `Bearer ${session.token()}`;
  let payload = form;
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    payload = JSON.stringify(body);
  }
  for (let attempt = 0; ; attempt++) {
    let response;
    try {
      response = await fetch(url, { method, headers, body: payload });
    } catch {
      throw new DashboardError(0, { code: null, message: "Cannot reach the Quarry server. Is it running?" });
    }
    const data = await response.json().catch(() => null);
    if (response.ok) return data;
    const error = data?.error ?? { code: null, message: `The server answered ${response.status} ${response.statusText}.` };
    const retryAfter = Math.max(1, Number(response.headers.get("retry-after")) || 1);
    if (error.code === "RATE_LIMIT_EXCEEDED" && attempt < RATE_LIMIT_RETRIES && retryAfter <= RETRY_AFTER_MAX_SECONDS) {
      await sleep(1000 * retryAfter);
      continue;
    }
    if (error.code === "RATE_LIMIT_EXCEEDED") error.message = `${error.message}: try again in ${retryAfter} s.`;
    if (auth && response.status === 401) signOut("Your session has ended. Sign in again.");
    throw new DashboardError(response.status, error);
  }
}

/** Runs `handler(formData, form)` on submit, with the button disabled and errors shown in the form. */
function onSubmit(form, handler) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector('[type="submit"]');
    const errorBox = form.querySelector("[data-error]");
    if (errorBox) showError(errorBox, null);
    if (button) button.disabled = true;
    form.setAttribute("aria-busy", "true");
    try {
      await handler(new FormData(form), form);
    } catch (error) {
      if (errorBox) showError(errorBox, error);
      else throw error;
    } finally {
      if (button) button.disabled = false;
      form.removeAttribute("aria-busy");
    }
  });
}

// ---------------------------------------------------------------- Navigation state

/** Increases on every navigation: responses that arrive for an earlier view are dropped. */
let visit = 0;
let pollTimer = null;

function stopPolling() {
  clearTimeout(pollTimer);
  pollTimer = null;
}

/** Runs `task` after the poll interval, unless the user has navigated away by then. */
function poll(task) {
  const scheduledFor = visit;
  stopPolling();
  pollTimer = setTimeout(() => {
    if (scheduledFor === visit) task();
  }, POLL_MS);
}

// ---------------------------------------------------------------- Paged lists

/**
 * A table body or list filled from a cursor-paginated endpoint: reload() starts over, "Load more"
 * appends the next page, refresh() re-reads the loaded rows in place (for live status) without
 * rebuilding unchanged rows, so focus and scroll position survive. Its elements in the page are
 * <prefix>-items, <prefix>-empty, <prefix>-more and <prefix>-list-error.
 */
function pagedList({ prefix, fetchPage, render }) {
  const container = byId(`${prefix}-items`);
  const empty = byId(`${prefix}-empty`);
  const more = byId(`${prefix}-more`);
  const error = byId(`${prefix}-list-error`);
  const rows = new Map();
  let cursor = null;
  let generation = 0;

  function show(page) {
    showError(error, null);
    cursor = page.meta.cursor;
    more.hidden = !page.meta.has_more;
    empty.hidden = rows.size > 0;
  }

  async function loadNext(forGeneration) {
    more.disabled = true;
    try {
      const page = await fetchPage(cursor, PAGE_SIZE);
      if (forGeneration !== generation) return;
      for (const item of page.data) {
        const element = render(item);
        rows.set(item.id, { item, element });
        container.append(element);
      }
      show(page);
    } catch (failure) {
      if (forGeneration === generation) showError(error, failure);
    } finally {
      more.disabled = false;
    }
  }

  more.addEventListener("click", () => loadNext(generation));

  return {
    items: () => [...rows.values()].map((row) => row.item),
    reload() {
      generation++;
      cursor = null;
      rows.clear();
      container.replaceChildren();
      more.hidden = true;
      empty.hidden = true;
      showError(error, null);
      return loadNext(generation);
    },
    async refresh() {
      const forGeneration = generation;
      let page;
      try {
        // As many rows as are shown, a page of at most MAX_PAGE_SIZE at a time (one page cut the list to it).
        const wanted = Math.max(PAGE_SIZE, rows.size);
        const data = [];
        do {
          page = await fetchPage(page?.meta.cursor ?? null, Math.min(MAX_PAGE_SIZE, wanted - data.length));
          data.push(...page.data);
        } while (page.meta.has_more && data.length < wanted);
        page = { data, meta: page.meta };
      } catch (failure) {
        if (forGeneration === generation) showError(error, failure);
        return;
      }
      if (forGeneration !== generation) return;
      const fresh = new Set(page.data.map((item) => item.id));
      for (const [id, row] of rows) {
        if (!fresh.has(id)) {
          row.element.remove();
          rows.delete(id);
        }
      }
      let previous = null;
      for (const item of page.data) {
        let row = rows.get(item.id);
        if (!row) {
          row = { item, element: render(item) };
          rows.set(item.id, row);
        } else if (JSON.stringify(row.item) !== JSON.stringify(item)) {
          const element = render(item);
          row.element.replaceWith(element);
          Object.assign(row, { item, element });
        }
        const expected = previous ? previous.nextSibling : container.firstChild;
        if (row.element !== expected) {
          if (previous) previous.after(row.element);
          else container.prepend(row.element);
        }
        previous = row.element;
      }
      show(page);
    },
    remove(id) {
      rows.get(id)?.element.remove();
      rows.delete(id);
      empty.hidden = rows.size > 0;
    },
  };
}

// ---------------------------------------------------------------- Views

function showView(id, title, navKey) {
  for (const section of document.querySelectorAll("[data-view]")) section.hidden = section.id !== id;
  for (const link of document.querySelectorAll("[data-nav]")) {
    if (link.dataset.nav === navKey) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.title = `${title} · Quarry`;
}

// --- Sign in / sign up

function showAuth(notice) {
  byId("app-view").hidden = true;
  byId("auth-view").hidden = false;
  document.title = "Sign in · Quarry";
  const noticeBox = byId("auth-notice");
  noticeBox.textContent = notice ?? "";
  noticeBox.hidden = !notice;
}

function selectAuthTab(signup) {
  for (const [tab, selected] of [
    [byId("tab-signin"), !signup],
    [byId("tab-signup"), signup],
  ]) {
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
  }
  byId("signin-form").hidden = signup;
  byId("signup-form").hidden = !signup;
}

byId("tab-signin").addEventListener("click", () => selectAuthTab(false));
byId("tab-signup").addEventListener("click", () => selectAuthTab(true));
byId("tab-signin").parentElement.addEventListener("keydown", (event) => {
  if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
  const signup = byId("tab-signup").getAttribute("aria-selected") !== "true";
  selectAuthTab(signup);
  byId(signup ? "tab-signup" : "tab-signin").focus();
});

onSubmit(byId("signin-form"), async (data, form) => {
  byId("auth-notice").hidden = true;
  const { data: result } = await api("POST", "/auth/login", {
    auth: false,
    body: { email: data.get("email"), password: data.get("password") },
  });
  session.save(result.token, result.account);
  form.reset();
  route();
});

onSubmit(byId("signup-form"), async (data, form) => {
  byId("auth-notice").hidden = true;
  const body = { email: data.get("email"), password: data.get("password") };
  if (data.get("name").trim()) body.name = data.get("name").trim();
  const { data: result } = await api("POST", "/auth/signup", { auth: false, body });
  session.save(result.token, result.account);
  form.reset();
  route();
  showApiKey(result.api_key);
});

/**
 * Signs out by loading the page afresh, without the account's page in the URL: nothing of it (views, open
 * forms and their errors, usage figures) stays on screen for whoever signs in next in this tab.
 */
function signOut(notice) {
  visit++;
  stopPolling();
  session.clear();
  sessionStorage.setItem(NOTICE_KEY, notice);
  location.replace(location.pathname);
}

/** The notice signOut left for the sign-in page, once. */
function takeNotice() {
  const notice = sessionStorage.getItem(NOTICE_KEY);
  sessionStorage.removeItem(NOTICE_KEY);
  return notice ?? undefined;
}

byId("sign-out").addEventListener("click", () => signOut("You have signed out."));

// --- The API key, shown once

/** `returnTo`: where focus goes once the key is saved (the page's content when not given). */
function showApiKey(apiKey, note = "", returnTo = null) {
  const dialog = byId("key-dialog");
  const input = byId("key-value");
  input.value = apiKey;
  byId("key-note").textContent = note;
  byId("key-note").hidden = !note;
  byId("key-copy-status").textContent = "";
  // Escape would close it and wipe a key shown only once: it closes by "Done" alone. Chromium closes a
  // modal dialog anyway after a few Escapes whose cancel was refused: it is opened again, key and all.
  dialog.oncancel = (event) => event.preventDefault();
  dialog.onclose = () => {
    if (dialog.returnValue !== "done") return void dialog.showModal();
    input.value = "";
    dialog.onclose = null;
    (returnTo?.isConnected ? returnTo : byId("main")).focus();
  };
  dialog.returnValue = "";
  dialog.showModal();
  input.select();
}

byId("key-copy").addEventListener("click", async () => {
  const input = byId("key-value");
  let copied = false;
  try {
    await navigator.clipboard.writeText(input.value);
    copied = true;
  } catch {
    // The Clipboard API needs a secure origin (https or localhost); fall back to a selection copy.
    input.select();
    copied = document.execCommand("copy");
  }
  byId("key-copy-status").textContent = copied ? "Copied to the clipboard." : "Could not copy: select the key and copy it yourself.";
});
byId("key-done").addEventListener("click", () => byId("key-dialog").close("done"));

// --- Knowledge bases

const knowledgeBases = pagedList({
  prefix: "kb",
  fetchPage: (cursor, limit) => api("GET", "/v1/knowledge-bases", { query: { cursor, limit } }),
  render: (kb) =>
    h(
      "tr",
      {},
      cell("Name", [
        h("a", { href: `#/knowledge-bases/${kb.id}`, class: "cell-title" }, displayName(kb.name)),
        kb.description ? h("div", { class: "cell-sub" }, kb.description) : null,
        h("div", { class: "cell-sub mono" }, kb.id),
      ]),
      cell("Documents", formatCount(kb.document_count), "num"),
      cell("Created", formatTime(kb.created_at), "nowrap"),
      h(
        "td",
        { class: "actions-cell" },
        h("button", { type: "button", class: "danger small", "aria-label": `Delete ${kb.name}`, onclick: () => deleteKnowledgeBase(kb, byId("kb-list-error")) }, "Delete"),
      ),
    ),
});

function showKnowledgeBases() {
  showView("view-knowledge-bases", "Knowledge bases", "knowledge-bases");
  return knowledgeBases.reload();
}

onSubmit(byId("kb-create-form"), async (data, form) => {
  const body = { name: data.get("name") };
  if (data.get("description").trim()) body.description = data.get("description");
  const { data: kb } = await api("POST", "/v1/knowledge-bases", { body });
  form.reset();
  toast(`Created “${kb.name}”.`);
  location.hash = `#/knowledge-bases/${kb.id}`;
});

async function deleteKnowledgeBase(kb, errorBox) {
  const documents = kb.document_count ? ` and its ${plural(kb.document_count, "document")}` : "";
  if (!confirm(`Delete the knowledge base “${kb.name}”${documents}? This cannot be undone.`)) return;
  try {
    await api("DELETE", `/v1/knowledge-bases/${kb.id}`);
    toast(`Deleted “${kb.name}”.`);
    if (location.hash === "#/knowledge-bases") knowledgeBases.remove(kb.id);
    else location.replace("#/knowledge-bases"); // Back must not lead to the deleted knowledge base
  } catch (error) {
    showError(errorBox, error);
  }
}

// --- One knowledge base: documents and the search playground

const current = { kb: null, kbId: null };

const documents = pagedList({
  prefix: "doc",
  fetchPage: (cursor, limit) =>
    api("GET", `/v1/knowledge-bases/${current.kbId}/documents`, { query: { cursor, limit, status: byId("doc-status").value } }),
  render: documentRow,
});

function documentRow(doc) {
  return h(
    "tr",
    {},
    cell("Name", [
      h("a", { href: `#/knowledge-bases/${doc.kb_id}/documents/${doc.id}`, class: "cell-title" }, displayName(doc.name)),
      h("div", { class: "cell-sub mono" }, doc.id),
      doc.status === "failed" && doc.error_detail ? h("div", { class: "cell-error" }, doc.error_detail) : null,
    ]),
    cell("Status", statusBadge(doc.status)),
    cell("Pages", formatCount(doc.page_count), "num"),
    cell("Chunks", formatCount(doc.chunk_count), "num"),
    cell("Size", formatBytes(doc.file_size_bytes), "num nowrap"),
    cell("Updated", formatTime(doc.updated_at), "nowrap"),
    h(
      "td",
      { class: "actions-cell" },
      h("button", { type: "button", class: "danger small", "aria-label": `Delete ${doc.name}`, onclick: () => deleteDocument(doc, byId("doc-list-error")) }, "Delete"),
    ),
  );
}

/** Keeps polling the documents list while any listed document is still being processed. */
function watchDocuments() {
  const processing = documents.items().filter((doc) => PROCESSING.includes(doc.status)).length;
  byId("doc-live").textContent = processing ? `${plural(processing, "document")} processing · updating live` : "";
  if (processing) poll(() => documents.refresh().then(watchDocuments));
  else stopPolling();
}

async function loadKnowledgeBaseHeader(forVisit) {
  try {
    const { data: kb } = await api("GET", `/v1/knowledge-bases/${current.kbId}`);
    if (forVisit !== visit) return;
    current.kb = kb;
    byId("kb-name").textContent = displayName(kb.name);
    byId("kb-crumb").textContent = displayName(kb.name);
    byId("kb-description").textContent = kb.description ?? "";
    byId("kb-description").hidden = !kb.description;
    byId("kb-count").textContent = `${plural(kb.document_count, "document")} · created ${formatDate(kb.created_at)}`;
    document.title = `${kb.name} · Quarry`;
  } catch (error) {
    if (forVisit !== visit) return;
    showError(byId("kb-error"), error);
    // Gone (deleted, or a mistyped link): nothing to upload to, search or delete.
    if (error.status === 404) {
      stopPolling();
      for (const id of ["kb-edit", "kb-delete", "kb-tabs", "panel-documents", "panel-search"]) byId(id).hidden = true;
      byId("kb-name").textContent = "Knowledge base not found";
    }
  }
}

/**
 * The knowledge base the knowledge-base page was last set up for. Not current.kbId: a document's page sets
 * that too, and the knowledge base's page opened from there kept an empty id tag.
 */
let knowledgeBasePageFor = null;

async function showKnowledgeBase(kbId, tab) {
  const forVisit = visit;
  showView("view-knowledge-base", "Knowledge base", "knowledge-bases");
  if (current.kbId !== kbId) {
    current.kbId = kbId;
    current.kb = null;
  }
  if (knowledgeBasePageFor !== kbId) {
    knowledgeBasePageFor = kbId;
    for (const id of ["kb-name", "kb-crumb", "kb-description", "kb-count"]) byId(id).textContent = "";
    byId("kb-id").textContent = kbId;
    byId("doc-status").value = "";
    showDocumentsFilter();
    byId("search-output").hidden = true;
    byId("upload-progress").textContent = "";
    kbEditForm.hidden = true;
    for (const form of ["upload-form", "text-form", "search-form"]) {
      byId(form).reset();
      showError(byId(form).querySelector("[data-error]"), null); // another knowledge base's form errors
    }
    syncSearchMode();
  }
  showError(byId("kb-error"), null);
  byId("kb-edit").hidden = byId("kb-delete").hidden = byId("kb-tabs").hidden = false;
  const base = `#/knowledge-bases/${kbId}`;
  for (const [link, href, active] of [
    [byId("tab-documents"), base, tab === "documents"],
    [byId("tab-search"), `${base}/search`, tab === "search"],
  ]) {
    link.href = href;
    if (active) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  byId("panel-documents").hidden = tab !== "documents";
  byId("panel-search").hidden = tab !== "search";
  const header = loadKnowledgeBaseHeader(forVisit);
  if (tab === "documents") {
    await documents.reload();
    if (forVisit === visit) watchDocuments();
  }
  await header;
}

byId("kb-delete").addEventListener("click", () => {
  if (current.kb) deleteKnowledgeBase(current.kb, byId("kb-error"));
});

const kbEditForm = byId("kb-edit-form");

byId("kb-edit").addEventListener("click", () => {
  const kb = current.kb;
  if (!kb) return;
  kbEditForm.elements.name.value = kb.name;
  kbEditForm.elements.description.value = kb.description ?? "";
  kbEditForm.elements.metadata.value = JSON.stringify(kb.metadata ?? {}, null, 2);
  showError(kbEditForm.querySelector("[data-error]"), null);
  kbEditForm.hidden = false;
  kbEditForm.elements.name.focus();
});
byId("kb-edit-cancel").addEventListener("click", () => (kbEditForm.hidden = true));

onSubmit(kbEditForm, async (data) => {
  const body = {
    name: data.get("name"),
    description: data.get("description").trim() ? data.get("description") : null,
    metadata: parseJsonObject(data.get("metadata"), "Metadata") ?? {},
  };
  const { data: kb } = await api("PATCH", `/v1/knowledge-bases/${current.kbId}`, { body });
  kbEditForm.hidden = true;
  toast(`Saved “${kb.name}”.`);
  await loadKnowledgeBaseHeader(visit);
});

/** The empty list's text: a status filter that matches nothing is not an empty knowledge base. */
function showDocumentsFilter() {
  const status = byId("doc-status").value;
  byId("doc-empty").textContent = status ? `No document is ${status}.` : "No documents here yet. Upload a file or add some text.";
}

byId("doc-status").addEventListener("change", () => {
  showDocumentsFilter();
  documents.reload().then(watchDocuments);
});

/** After an upload, a new text or a deletion: the list, the document count and live polling. */
async function documentsChanged() {
  await Promise.all([documents.refresh(), loadKnowledgeBaseHeader(visit)]);
  watchDocuments();
}

onSubmit(byId("upload-form"), async (data, form) => {
  const files = data.getAll("files").filter((file) => file instanceof File && file.name);
  if (files.length === 0) throw localError("Choose at least one file to upload.");
  const metadata = data.get("metadata");
  parseJsonObject(metadata, "Metadata");
  const progress = byId("upload-progress");
  const failures = [];
  let accepted = 0;
  for (const [index, file] of files.entries()) {
    progress.textContent = `Uploading ${index + 1} of ${files.length}: ${file.name}…`;
    const upload = new FormData();
    upload.append("file", file);
    if (metadata.trim()) upload.append("metadata", metadata);
    try {
      await api("POST", `/v1/knowledge-bases/${current.kbId}/documents`, { form: upload });
      accepted++;
    } catch (error) {
      error.label = file.name;
      failures.push(error);
      if (error.status === 401) break;
    }
  }
  progress.textContent = accepted ? `${plural(accepted, "file")} uploaded; processing in the background.` : "";
  if (accepted) {
    form.elements.files.value = "";
    toast(`${plural(accepted, "file")} uploaded.`);
    await documentsChanged();
  }
  if (failures.length) throw failures;
});

onSubmit(byId("text-form"), async (data, form) => {
  const body = { text: data.get("text") };
  if (data.get("name").trim()) body.name = data.get("name").trim();
  const metadata = parseJsonObject(data.get("metadata"), "Metadata");
  if (metadata) body.metadata = metadata;
  const { data: doc } = await api("POST", `/v1/knowledge-bases/${current.kbId}/documents/text`, { body });
  form.reset();
  toast(`Added “${doc.name}”.`);
  await documentsChanged();
});

/** From the list, or from the document's own page, which then gives way to its knowledge base's. */
async function deleteDocument(doc, errorBox) {
  if (!confirm(`Delete “${doc.name}” and its chunks? This cannot be undone.`)) return;
  try {
    await api("DELETE", `/v1/knowledge-bases/${doc.kb_id}/documents/${doc.id}`);
    toast(`Deleted “${doc.name}”.`);
    if (location.hash.endsWith(`/documents/${doc.id}`)) return location.replace(`#/knowledge-bases/${doc.kb_id}`); // not left in history
    documents.remove(doc.id);
    await documentsChanged();
  } catch (error) {
    showError(errorBox, error);
  }
}

// --- Search playground

const searchForm = byId("search-form");

/** Alpha only matters in hybrid mode and the keyword query only outside vector mode. */
function syncSearchMode() {
  const mode = searchForm.elements.mode.value;
  searchForm.elements.alpha.disabled = mode !== "hybrid";
  searchForm.elements.keyword_query.disabled = mode === "vector";
}
searchForm.elements.mode.addEventListener("change", syncSearchMode);

/** Without a cross-encoder (GET /api/health says), reranking is off and cannot be asked for. */
api("GET", "/health", { auth: false })
  .then(({ models }) => {
    if (models.reranker) return;
    const rerank = searchForm.elements.rerank;
    rerank.checked = rerank.defaultChecked = false;
    rerank.disabled = true;
    byId("rerank-label").textContent = "Rerank with a cross-encoder (none is installed)";
  })
  .catch(() => {}); // left as it is: the search reports rerank_applied

/** A number field's value, or undefined when blank or disabled (disabled fields are not in FormData). */
function numberField(data, name) {
  const raw = data.get(name);
  return raw === null || String(raw).trim() === "" ? undefined : Number(raw);
}

onSubmit(searchForm, async (data) => {
  const kbId = current.kbId;
  // Earlier results go as a new search starts: beside the error of one that fails, they looked like its results.
  byId("search-output").hidden = true;
  const body = { query: data.get("query"), mode: data.get("mode"), rerank: data.has("rerank"), include_metadata: true };
  for (const name of ["top_k", "alpha", "score_threshold"]) {
    const value = numberField(data, name);
    if (value !== undefined) body[name] = value;
  }
  const keywordQuery = data.get("keyword_query");
  if (keywordQuery && keywordQuery.trim()) body.keyword_query = keywordQuery;
  const filter = parseJsonObject(data.get("filter"), "Filter", '{"team": {"$eq": "support"}}');
  if (filter) body.filter = filter;
  const started = performance.now();
  const { data: result } = await api("POST", `/v1/knowledge-bases/${kbId}/search`, { body });
  if (kbId === current.kbId) renderSearch(result, kbId, Math.round(performance.now() - started));
});

function renderSearch(result, kbId, elapsedMs) {
  byId("search-output").hidden = false;
  byId("search-summary").textContent = `${plural(result.results.length, "result")} · ${elapsedMs} ms`;
  byId("search-usage").replaceChildren(
    ...Object.entries(result.usage).map(([key, value]) => h("div", {}, h("dt", {}, key), h("dd", {}, String(value)))),
  );
  const list = byId("search-results");
  list.replaceChildren(...result.results.map((item, index) => searchResult(item, index, kbId)));
  byId("search-empty").hidden = result.results.length > 0;
  // Offer "Show full text" only where the clamped passage actually hides something.
  requestAnimationFrame(() => {
    for (const passage of list.querySelectorAll(".passage")) {
      passage.nextElementSibling.querySelector("button").hidden = passage.scrollHeight <= passage.clientHeight + 1;
    }
  });
}

function searchResult(item, index, kbId) {
  const meta = item.metadata ?? {};
  const passage = h("p", { class: "passage clamped" }, item.text);
  const toggle = h("button", { type: "button", class: "link", "aria-expanded": "false", hidden: true }, "Show full text");
  toggle.addEventListener("click", () => {
    const clamped = passage.classList.toggle("clamped");
    toggle.textContent = clamped ? "Show full text" : "Show less";
    toggle.setAttribute("aria-expanded", String(!clamped));
  });
  return h(
    "li",
    { class: "result" },
    h(
      "div",
      { class: "result-head" },
      h("span", { class: "rank" }, `#${index + 1}`),
      h(
        "span",
        { class: "score", title: "Relevance score (0–1)" },
        fillBar("score-bar", item.score, { "aria-hidden": "true" }),
        h("span", { class: "sr-only" }, "score "),
        item.score.toFixed(3),
      ),
      h("a", { href: `#/knowledge-bases/${kbId}/documents/${item.document_id}` }, item.document_name),
      formatPages(meta.start_page, meta.end_page),
      meta.section_heading ? h("span", { class: "heading-tag", title: "Section heading" }, meta.section_heading) : null,
    ),
    passage,
    h(
      "div",
      { class: "result-foot" },
      toggle,
      h("span", { class: "mono" }, item.chunk_id),
      isEmptyObject(item.document_metadata) ? null : h("code", { title: "Document metadata" }, JSON.stringify(item.document_metadata)),
    ),
  );
}

// --- One document and its chunks

const chunks = pagedList({
  prefix: "chunk",
  fetchPage: (cursor, limit) =>
    api("GET", `/v1/knowledge-bases/${current.kbId}/documents/${current.docId}/chunks`, { query: { cursor, limit } }),
  render: (chunk) =>
    h(
      "li",
      { class: "chunk" },
      h(
        "div",
        { class: "chunk-head" },
        h("span", { class: "rank" }, `#${chunk.chunk_index}`),
        formatPages(chunk.start_page, chunk.end_page),
        chunk.section_heading ? h("span", { class: "heading-tag" }, chunk.section_heading) : null,
        h("span", {}, plural(chunk.token_count, "token")),
      ),
      h("p", { class: "passage" }, chunk.text),
      isEmptyObject(chunk.metadata) ? null : h("div", { class: "result-foot" }, h("code", {}, JSON.stringify(chunk.metadata))),
    ),
});

function renderDocument(doc) {
  current.doc = doc;
  const metadataField = byId("doc-meta-form").elements.metadata;
  // Filled once per document, so that polling never overwrites what is being typed.
  if (metadataField.dataset.docId !== doc.id) {
    metadataField.value = JSON.stringify(doc.metadata, null, 2);
    metadataField.dataset.docId = doc.id;
  }
  byId("doc-name").textContent = doc.name;
  byId("doc-crumb").textContent = doc.name;
  byId("chunk-empty").textContent = doc.status === "failed" ? "No chunks: processing failed (see the error above)." : "No chunks yet.";
  document.title = `${doc.name} · Quarry`;
  renderFacts(byId("doc-facts"), [
    ["Status", statusBadge(doc.status)],
    ["Type", doc.file_type],
    ["Size", formatBytes(doc.file_size_bytes)],
    ["Pages", formatCount(doc.page_count)],
    ["Chunks", formatCount(doc.chunk_count)],
    ["Created", formatTime(doc.created_at)],
    ["Updated", formatTime(doc.updated_at)],
    doc.error_detail ? ["Error", h("span", { class: "cell-error" }, doc.error_detail), true] : null,
    ["Metadata", isEmptyObject(doc.metadata) ? "none" : h("pre", {}, JSON.stringify(doc.metadata, null, 2)), true],
  ].filter(Boolean));
  byId("chunk-live").textContent = PROCESSING.includes(doc.status) ? `Document is ${doc.status}; chunks appear when it is ready.` : "";
}

/** Reads the document; while it is processing, again every poll interval, reloading chunks once it is done. */
async function followDocument(forVisit, previousStatus) {
  try {
    const { data: doc } = await api("GET", `/v1/knowledge-bases/${current.kbId}/documents/${current.docId}`);
    if (forVisit !== visit) return;
    renderDocument(doc);
    if (PROCESSING.includes(previousStatus) && !PROCESSING.includes(doc.status)) chunks.reload();
    if (PROCESSING.includes(doc.status)) poll(() => followDocument(forVisit, doc.status));
  } catch (error) {
    if (forVisit === visit) showError(byId("doc-error"), error);
  }
}

onSubmit(byId("doc-meta-form"), async (data) => {
  const metadata = parseJsonObject(data.get("metadata"), "Metadata") ?? {};
  const { data: doc } = await api("PATCH", `/v1/knowledge-bases/${current.kbId}/documents/${current.docId}`, { body: { metadata } });
  renderDocument(doc);
  toast("Metadata saved.");
});

byId("doc-delete").addEventListener("click", () => {
  if (current.doc) deleteDocument(current.doc, byId("doc-error"));
});

async function showDocument(kbId, docId) {
  const forVisit = visit;
  showView("view-document", "Document", "knowledge-bases");
  if (current.kbId !== kbId) current.kb = null;
  Object.assign(current, { kbId, docId });
  const kbLink = byId("doc-kb-crumb");
  kbLink.href = `#/knowledge-bases/${kbId}`;
  kbLink.textContent = current.kb?.name ?? kbId;
  for (const id of ["doc-name", "doc-crumb"]) byId(id).textContent = docId;
  byId("doc-id").textContent = docId;
  byId("doc-facts").replaceChildren();
  current.doc = null;
  byId("doc-meta-form").elements.metadata.dataset.docId = "";
  showError(byId("doc-meta-form").querySelector("[data-error]"), null);
  showError(byId("doc-error"), null);
  if (!current.kb) {
    api("GET", `/v1/knowledge-bases/${kbId}`)
      .then(({ data: kb }) => {
        if (forVisit === visit) kbLink.textContent = kb.name;
      })
      .catch(() => {});
  }
  await Promise.all([followDocument(forVisit, null), chunks.reload()]);
}

// --- Usage

function renderMeter(card, title, used, limit, percent) {
  const level = percent >= 100 ? " full" : percent >= 80 ? " high" : "";
  card.replaceChildren(
    h("h2", {}, title),
    h("p", { class: "meter-figure" }, formatCount(used), h("small", {}, ` of ${formatCount(limit)}`)),
    fillBar(`bar${level}`, limit > 0 ? used / limit : 1, {
      role: "progressbar",
      "aria-label": title,
      "aria-valuemin": 0,
      "aria-valuemax": limit,
      "aria-valuenow": Math.min(used, limit),
    }),
    h("p", { class: "hint" }, `${percent}% used · ${formatCount(Math.max(0, limit - used))} left this period`),
  );
}

async function showUsage() {
  const forVisit = visit;
  showView("view-usage", "Usage", "usage");
  showError(byId("usage-error"), null);
  try {
    const { data: usage } = await api("GET", "/v1/usage");
    if (forVisit !== visit) return;
    byId("usage-period").textContent =
      `Plan: ${usage.plan} · billing period ${formatDate(usage.current_period_start)} – ${formatDate(usage.current_period_end)}`;
    renderMeter(byId("usage-pages"), "Pages processed", usage.usage.pages_processed, usage.limits.pages_processed, usage.percentage_consumed.pages);
    renderMeter(byId("usage-queries"), "Search queries", usage.usage.search_queries, usage.limits.search_queries, usage.percentage_consumed.queries);
  } catch (error) {
    if (forVisit === visit) showError(byId("usage-error"), error);
  }
}

// --- Request history

const requestFilters = byId("request-filters");

const requests = pagedList({
  prefix: "request",
  fetchPage(cursor, limit) {
    const filters = new FormData(requestFilters);
    const query = { cursor, limit, auth_type: filters.get("auth_type"), status: filters.get("status"), path: filters.get("path").trim() };
    return api("GET", "/v1/requests", { query });
  },
  render: (entry) =>
    h(
      "tr",
      {},
      cell("Time", preciseTimeFormat.format(new Date(entry.created_at)), "nowrap"),
      cell("Method", h("span", { class: "badge method" }, entry.method)),
      cell(
        "Path",
        h(
          "details",
          {},
          h("summary", {}, entry.path),
          h(
            "pre",
            {},
            JSON.stringify(
              {
                id: entry.id,
                auth_type: entry.auth_type,
                kb_id: entry.kb_id,
                request_summary: entry.request_summary,
                response_summary: entry.response_summary,
              },
              null,
              2,
            ),
          ),
        ),
        "path-cell",
      ),
      cell("Status", h("span", { class: `badge s${String(entry.status_code)[0]}` }, entry.status_code), "num"),
      cell("Duration", `${formatCount(entry.duration_ms)} ms`, "num nowrap"),
    ),
});

requestFilters.addEventListener("change", () => requests.reload());
onSubmit(requestFilters, () => requests.reload());

function showRequests() {
  showView("view-requests", "Request history", "requests");
  return requests.reload();
}

// --- Account

async function showAccount() {
  const forVisit = visit;
  showView("view-account", "Account", "account");
  showError(byId("account-error"), null);
  showError(byId("regenerate-error"), null);
  try {
    const { data: account } = await api("GET", "/v1/account");
    if (forVisit !== visit) return;
    session.save(session.token(), account);
    byId("account-email").textContent = account.email;
    renderFacts(byId("account-facts"), [
      ["Email", account.email, true],
      ["Name", account.name],
      ["Plan", account.plan],
      // A subscribed account has no trial to speak of; one whose subscription ended is on the trial plan, its trial over.
      ...(account.plan === "trial" ? [[new Date(account.trial_ends_at) <= new Date() ? "Trial ended" : "Trial ends", formatTime(account.trial_ends_at)]] : []),
      ["Created", formatTime(account.created_at)],
      ["Account id", h("code", {}, account.id)],
    ]);
  } catch (error) {
    if (forVisit === visit) showError(byId("account-error"), error);
  }
}

byId("regenerate-key").addEventListener("click", async (event) => {
  if (!confirm("Create a new API key? The current key stops working immediately; every application using it must be updated.")) return;
  const button = event.currentTarget;
  button.disabled = true;
  showError(byId("regenerate-error"), null);
  try {
    const { data } = await api("POST", "/auth/api-key/regenerate");
    showApiKey(data.api_key, data.message, button);
  } catch (error) {
    showError(byId("regenerate-error"), error);
  } finally {
    button.disabled = false;
  }
});

// ---------------------------------------------------------------- Router

const ROUTES = [
  [/^#\/knowledge-bases$/, showKnowledgeBases],
  [/^#\/knowledge-bases\/(kb_[0-9a-z]+)$/, (kbId) => showKnowledgeBase(kbId, "documents")],
  [/^#\/knowledge-bases\/(kb_[0-9a-z]+)\/search$/, (kbId) => showKnowledgeBase(kbId, "search")],
  [/^#\/knowledge-bases\/(kb_[0-9a-z]+)\/documents\/(doc_[0-9a-z]+)$/, showDocument],
  [/^#\/usage$/, showUsage],
  [/^#\/requests$/, showRequests],
  [/^#\/account$/, showAccount],
];

function route() {
  visit++;
  stopPolling();
  if (!session.token()) return showAuth(takeNotice());
  byId("auth-view").hidden = true;
  byId("app-view").hidden = false;
  byId("account-email").textContent = session.account()?.email ?? "";
  for (const [pattern, view] of ROUTES) {
    const match = pattern.exec(location.hash);
    if (match) {
      window.scrollTo(0, 0);
      // A new page: keyboard and screen-reader users start at its content, not wherever focus was left.
      if (!byId("key-dialog").open) byId("main").focus({ preventScroll: true });
      return view(...match.slice(1));
    }
  }
  location.replace("#/knowledge-bases");
}

window.addEventListener("hashchange", route);
// Pages live in the URL's hash, so the skip link's #main would be read as an unknown page: it moves focus instead.
document.querySelector(".skip-link").addEventListener("click", (event) => {
  event.preventDefault();
  byId("main").focus();
});
route();

// /v1/knowledge-bases/{kb_id}/documents (service spec §4.3).
import { Elysia } from "elysia";
import { z } from "zod";
import type { AppContext } from "../context.ts";
import { authenticated } from "../auth.ts";
import { requestState } from "../request-state.ts";
import { Metadata, MetadataInput, PaginationQuery, dataOf, errorResponses, meteredErrorResponses, pageOf, prefixedId, V1_ERRORS, Timestamp, Count, returnedId } from "../schemas.ts";
import { DOCUMENT_STATUSES, type Document } from "../../store/documents.ts";
import { DocumentService, type UploadInput } from "../../ingest/document-service.ts";
import { MULTIPART, requireMultipart } from "../body.ts";
import { routeNotFound } from "../errors.ts";
import { MAX_FILE_BYTES, MAX_NAME_LENGTH, MAX_TEXT_LENGTH, parseMetadataField, sentFileName } from "../../ingest/upload-rules.ts";
import { SUPPORTED_TYPES } from "../../ingest/parsers/index.ts";

export const DocumentSchema = z.object({
  id: returnedId("doc"),
  kb_id: returnedId("kb"),
  account_id: returnedId("acc"),
  name: z.string(),
  file_type: z.string().describe("Lowercased file extension"),
  file_size_bytes: Count.nullable(),
  page_count: Count.nullable().describe("Set after parsing for pdf, docx, pptx, xlsx and images; null for text types"),
  chunk_count: Count,
  status: z.enum(DOCUMENT_STATUSES),
  error_detail: z.string().nullable(),
  metadata: Metadata,
  storage_path: z
    .string()
    .nullable()
    .describe("Relative to the data directory; its file name is the document's name made filesystem-safe and cut to 200 UTF-8 bytes (extension kept)"),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ChunkSchema = z.object({
  id: returnedId("chk"),
  document_id: returnedId("doc"),
  kb_id: returnedId("kb"),
  text: z.string(),
  chunk_index: Count,
  start_page: Count.nullable().describe("null for text-only documents"),
  end_page: Count.describe("1 for text-only documents"),
  section_heading: z
    .string()
    .describe(
      "The heading all of the chunk's text is under (a chunk never spans two sections, however short; headings with no text of their own come with the section after them); \"\" for text before a document's first heading or in a document without headings",
    ),
  token_count: Count,
  metadata: Metadata,
  created_at: Timestamp,
});

const FILE_RULES =
  `Allowed extensions (case-insensitive): ${SUPPORTED_TYPES.join(", ")}; not empty and at most ${MAX_FILE_BYTES} bytes (50 MB). ` +
  "The document's name is the part's filename without its directories; a name sent percent-encoded (RFC 7578) or as RFC 2047 encoded words is decoded, and one sent as filename*= (RFC 5987, UTF-8 or ISO-8859-1) is preferred to filename=, as RFC 6266 has it, unless it names nothing an upload can take (blank, no supported extension).";

const UploadBody = z.object(
  {
    file: z
      .file({
        error: (issue) =>
          issue.input === undefined
            ? 'is required: send the document as the multipart form field "file"'
            : Array.isArray(issue.input)
              ? 'must be sent once: one document per request in the form field "file"'
              : 'must be a file: send the document as a multipart file part (with a filename) in the field "file"',
      })
      .describe(FILE_RULES),
    // Elysia already turns form fields that hold JSON into values, so this is checked in the handler.
    metadata: z.unknown().optional().meta({ type: "string", description: 'A JSON object as a string, e.g. {"team":"support"} (a file part holding that JSON is read too)' }),
  },
  { error: 'must be a multipart/form-data body with the document in the field "file"' },
);

const TextBody = z.object({
  text: z.string().min(1).max(MAX_TEXT_LENGTH),
  name: z.string().min(1).max(MAX_NAME_LENGTH).nullish().describe("Kept as sent, slashes included (control characters and bidirectional overrides are dropped); absent or null: text-<created_at as ISO timestamp>.txt"),
  metadata: MetadataInput.nullish(),
});

const PatchBody = z.object({ metadata: MetadataInput.describe(`Replaces the existing metadata. ${MetadataInput.description}`) });

const ListQuery = PaginationQuery.extend({ status: z.enum(DOCUMENT_STATUSES).optional() });

const ChunksQuery = PaginationQuery.extend({
  cursor: z
    .string()
    .optional()
    .describe("meta.cursor of the previous page: the chunk_index after which the page starts (a whole number from 0, which a client may also write); absent or empty: the first page; any other value is a 400"),
});

const KbParams = z.object({ kb_id: prefixedId("kb") });
const DocParams = KbParams.extend({ doc_id: prefixedId("doc") });

const tags = ["Documents"];

/** Route options shared by upload and replacement. */
const MULTIPART_UPLOAD = { parse: MULTIPART, transform: requireMultipart, body: UploadBody, response: { 202: dataOf(DocumentSchema) } } as const;

/** The upload as the service takes it; the request log gets what was sent (its name decoded), never the contents. */
async function uploadInput(request: Request, body: z.infer<typeof UploadBody>): Promise<UploadInput> {
  const name = sentFileName(body.file.name ?? ""); // a part sent with filename="" has none
  const summary: Record<string, unknown> = {
    file_name: name,
    file_size_bytes: body.file.size,
    file_type: /\.([^.]+)$/.exec(name)?.[1]?.toLowerCase() ?? null,
  };
  requestState(request).requestSummary = summary;
  // Read from the form as sent: Elysia has made values of the JSON in it, a JSON array as if the field came twice.
  const metadata = await parseMetadataField(requestState(request).form?.getAll("metadata") ?? []);
  if (metadata) summary.metadata_keys = Object.keys(metadata);
  return { file: body.file, metadata };
}

function accepted(request: Request, set: { status?: number | string }, document: Document) {
  set.status = 202;
  requestState(request).responseSummary = { document_id: document.id, status: document.status };
  return { data: document };
}

export function documentRoutes(ctx: AppContext) {
  const documents = new DocumentService({
    db: ctx.db,
    files: ctx.files,
    deletions: ctx.deletions,
    clock: ctx.clock,
    limitsEnabled: ctx.config.limitsEnabled,
    queueChanged: () => ctx.ingest.wake(),
  });

  // …/documents/text takes POST only: another method there is no route (404, before any credential check, as
  // for any path and method no endpoint answers), not a read of a document whose id "text" lacks its prefix (400).
  const notARoute = ({ request }: { request: Request }) => {
    throw routeNotFound(request);
  };
  const hidden = { detail: { hide: true } };
  return new Elysia({ prefix: "/knowledge-bases/:kb_id/documents" })
    .get("/text", notARoute, hidden)
    .put("/text", notARoute, hidden)
    .patch("/text", notARoute, hidden)
    .delete("/text", notARoute, hidden)
    .use(authenticated(ctx))
    .onBeforeHandle(({ request, params }) => {
      requestState(request).kbId = (params as { kb_id: string }).kb_id;
    })
    .post(
      "",
      async ({ request, params, body, principal, set }) =>
        accepted(request, set, await documents.upload(principal.account, params.kb_id, await uploadInput(request, body))),
      {
        params: KbParams,
        ...MULTIPART_UPLOAD,
        detail: {
          operationId: "uploadDocument", summary: "Upload a document",
          description:
            `Stores the file and queues it for processing; poll the document until status is ready or failed (GET …/documents?status=<status> ` +
            "lists a knowledge base's documents in one status). No notification is sent when processing completes: the service makes no outbound calls, so that an " +
            `air-gapped install needs no route out and no tenant can make it call an address of their choosing. ${FILE_RULES} ` +
            "file_type is the lowercased extension. Images, and PDF pages without a text layer or whose fonts have no Unicode map, " +
            "are read by OCR (English); on a PDF page that otherwise reads fine, the area of text set in such fonts (a figure's " +
            "labels, often) is read by OCR and added after the page's text; a page " +
            "that reads as garbage is read again turned 90°, 180° and 270° and the most legible reading kept (scans on their side). " +
            "What is not the document's text stays out: PDF running headers and footers (a line at the top or bottom of at least half " +
            "the pages, numbers aside), HTML navigation, footers, sidebars, breadcrumbs, cookie notices, sharing buttons and hidden " +
            "elements, Markdown comments, Word footnotes' back-links. A CSV's delimiter (comma, semicolon, tab or |) is read off its " +
            "rows, and its first row (like a sheet's) names the columns: each value is indexed as \"<column>: <value>\". Tables " +
            "side by side on a sheet, parted by an empty column and starting on different rows, each take their own first row. " +
            "Limits (429 USAGE_LIMIT_EXCEEDED): the trial period, the monthly page " +
            "allowance (resource pages), the plan's document count (documents) and storage (storage).",
          tags,
          responses: meteredErrorResponses(...V1_ERRORS, 404),
        },
      },
    )
    .post(
      "/text",
      async ({ request, params, body, principal, set }) => {
        requestState(request).requestSummary = {
          name: body.name ?? null,
          file_type: "txt",
          file_size_bytes: Buffer.byteLength(body.text),
          text_length: body.text.length,
          metadata_keys: Object.keys(body.metadata ?? {}),
        };
        const { text, name, metadata } = body;
        return accepted(request, set, await documents.addText(principal.account, params.kb_id, { text, name: name ?? undefined, metadata: metadata ?? undefined }));
      },
      {
        params: KbParams,
        body: TextBody,
        response: { 202: dataOf(DocumentSchema) },
        detail: {
          operationId: "createTextDocument", summary: "Add raw text as a document",
          description:
            "The text is stored as a UTF-8 .txt file (file_type txt) and goes through the same pipeline as uploads. " +
            "Without a name the document is called text-<ISO timestamp>.txt, the timestamp being its created_at. Same limits as uploads.",
          tags,
          responses: meteredErrorResponses(...V1_ERRORS, 404),
        },
      },
    )
    .get("", ({ params, query, principal }) => documents.list(principal.account, params.kb_id, query), {
      params: KbParams,
      query: ListQuery,
      response: { 200: pageOf(DocumentSchema) },
      detail: {
        operationId: "listDocuments", summary: "List documents, newest first",
        description: "Optionally only those with the given status. Page size 1–100, default 20.",
        tags,
        responses: errorResponses(...V1_ERRORS, 404),
      },
    })
    .get("/:doc_id", ({ params, principal }) => ({ data: documents.get(principal.account, params.kb_id, params.doc_id) }), {
      params: DocParams,
      response: { 200: dataOf(DocumentSchema) },
      detail: { operationId: "getDocument", summary: "Get a document", tags, responses: errorResponses(...V1_ERRORS, 404) },
    })
    .put(
      "/:doc_id",
      async ({ request, params, body, principal, set }) =>
        accepted(request, set, await documents.replace(principal.account, params.kb_id, params.doc_id, await uploadInput(request, body))),
      {
        params: DocParams,
        ...MULTIPART_UPLOAD,
        detail: {
          operationId: "replaceDocument", summary: "Replace a document's file",
          description:
            "Allowed when the document is ready or failed (otherwise 409 CONFLICT \"Document is still processing\"). " +
            "The document keeps its id and, unless metadata is sent, its metadata; name and file_type follow the new file. " +
            "It goes back to pending and, like any document not ready, is not searched until processing ends; its chunks are then replaced all at once. " +
            "If the new file fails, the document is failed and has no chunks. " +
            `${FILE_RULES} Same limits as uploads; pages are counted again when processing succeeds.`,
          tags,
          responses: meteredErrorResponses(...V1_ERRORS, 404, 409),
        },
      },
    )
    .patch(
      "/:doc_id",
      async ({ params, body, principal }) => ({
        data: await documents.updateMetadata(principal.account, params.kb_id, params.doc_id, body.metadata),
      }),
      {
        params: DocParams,
        body: PatchBody,
        response: { 200: dataOf(DocumentSchema) },
        detail: {
          operationId: "updateDocumentMetadata", summary: "Replace a document's metadata",
          description: "Allowed in any status; the document is not processed again and its status does not change.",
          tags,
          responses: errorResponses(...V1_ERRORS, 404),
        },
      },
    )
    .delete(
      "/:doc_id",
      async ({ params, principal }) => {
        await documents.remove(principal.account, params.kb_id, params.doc_id);
        return { data: { deleted: true } };
      },
      {
        params: DocParams,
        response: { 200: dataOf(z.object({ deleted: z.boolean() })) },
        detail: {
          operationId: "deleteDocument", summary: "Delete a document",
          description:
            "Irreversible: removes the document, its chunks, vectors, keyword index rows and stored file, even while it is processing. " +
            "From the start other requests neither find nor list it (a DELETE at the same time waits for the same deletion) and search leaves it out; a large document's chunks are removed 500 per transaction (about 15 ms of the request per 500 " +
            "chunks) so that other requests are not held up, and the response comes when they are gone.",
          tags,
          responses: errorResponses(...V1_ERRORS, 404),
        },
      },
    )
    .get(
      "/:doc_id/chunks",
      ({ params, query, principal }) => documents.chunks(principal.account, params.kb_id, params.doc_id, query.limit, query.cursor),
      {
        params: DocParams,
        query: ChunksQuery,
        response: { 200: pageOf(ChunkSchema) },
        detail: {
          operationId: "listChunks", summary: "List a document's chunks",
          description:
            "Ordered by chunk_index ascending. The cursor is the chunk_index of the page's last chunk, as a string (\"19\"): the next page starts after it. Page size 1–100, default 20. " +
            "start_page is null and end_page 1 for text-only documents (txt, md, html, htm, csv, tsv, json).",
          tags,
          responses: errorResponses(...V1_ERRORS, 404),
        },
      },
    );
}

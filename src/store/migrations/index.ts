// Every migration, in order. Numbers are grouped by concern: 1–9 core, 10–19 ingest, 20–29 search,
// 30–39 billing, 40–49 models. Never edit a migration that has shipped; add a new one.
import type { Migration } from "./migration.ts";
import { core } from "./001_core.ts";
import { documentsByStatus } from "./002_documents_by_status.ts";
import { knowledgeBaseDeletion } from "./003_knowledge_base_deletion.ts";
import { documentDeletion } from "./004_document_deletion.ts";
import { liveDocumentCount } from "./005_live_document_count.ts";
import { startupReads } from "./006_startup_reads.ts";
import { ingestJobs } from "./010_ingest_jobs.ts";
import { ingestTurns } from "./011_ingest_turns.ts";
import { ingestJobAccounts } from "./012_ingest_job_accounts.ts";
import { searchVersions } from "./020_search_versions.ts";
import { searchLog } from "./021_search_log.ts";
import { vectorPurge } from "./022_vector_purge.ts";
import { deletionLogQuiet } from "./023_deletion_log_quiet.ts";
import { searchSeesDeletion } from "./024_search_sees_deletion.ts";
import { documentCounts } from "./025_document_counts.ts";
import { usage } from "./030_usage.ts";
import { requestLog } from "./031_request_log.ts";
import { webhookEvents } from "./032_webhook_events.ts";
import { webhookEventOrder } from "./033_webhook_event_order.ts";
import { webhookEventBackfill } from "./034_webhook_event_backfill.ts";

export const MIGRATIONS: Migration[] = [core, documentsByStatus, knowledgeBaseDeletion, documentDeletion, liveDocumentCount, startupReads, ingestJobs, ingestTurns, ingestJobAccounts, searchVersions, searchLog, vectorPurge, deletionLogQuiet, searchSeesDeletion, documentCounts, usage, requestLog, webhookEvents, webhookEventOrder, webhookEventBackfill];

import type { Migration } from "./migration.ts";

// A knowledge base being deleted (store/deletions.ts): hidden at once, its rows deleted in
// slices; a start finds the ones a stop interrupted and finishes them.
export const knowledgeBaseDeletion: Migration = {
  version: 3,
  name: "knowledge base deletion",
  sql: `ALTER TABLE knowledge_bases ADD COLUMN deleting INTEGER NOT NULL DEFAULT 0;`,
};

// Metadata objects are stored as JSON text.

export function parseJsonObject(text: string | null | undefined): Record<string, unknown> {
  if (!text) return {};
  const value = JSON.parse(text);
  return value && typeof value === "object" && !Array.isArray(value) ? value : {};
}

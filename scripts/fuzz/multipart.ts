// Multipart bodies written by hand, so file names, part headers and boundaries go out exactly as generated
// (FormData would escape quotes and newlines in names, and always close the body properly).
export interface Part {
  name: string;
  /** Present: the part is a file with this name (raw string; non-ASCII goes out as UTF-8). */
  filename?: string;
  contentType?: string;
  /** Extra header lines for the part, written verbatim. */
  headers?: string[];
  data: string | Uint8Array;
}

export const BOUNDARY = "----quarryfuzz7MA4YWxkTrZu0gW";

export function multipart(parts: Part[], options: { boundary?: string; close?: boolean } = {}): Uint8Array {
  const boundary = options.boundary ?? BOUNDARY;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `Content-Disposition: form-data; name="${part.name}"${part.filename === undefined ? "" : `; filename="${part.filename}"`}`;
    const lines = [`--${boundary}`, disposition, ...(part.contentType ? [`Content-Type: ${part.contentType}`] : []), ...(part.headers ?? [])];
    chunks.push(Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "utf8"), Buffer.from(part.data), Buffer.from("\r\n"));
  }
  if (options.close !== false) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

export const MULTIPART_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

/** A file part named `filename` with the given content. */
export function filePart(filename: string, data: string | Uint8Array, contentType = "application/octet-stream"): Part {
  return { name: "file", filename, contentType, data };
}

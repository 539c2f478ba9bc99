import { htmlToSections } from "./html-sections.ts";
import { decodeText } from "./text-decode.ts";
import type { ParsedDocument } from "./types.ts";

/** Bytes the HTML standard's prescan reads for a <meta charset> (or http-equiv Content-Type) before giving up. */
const PRESCAN_BYTES = 1024;
const META_CHARSET = /<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([\w.:-]+)/i;

/**
 * The legacy encoding the page declares (windows-1251, shift_jis, gb2312…), if TextDecoder knows it. A
 * declared UTF-8 or UTF-16 is left to decodeText's own reading, as browsers do for a page without a BOM.
 */
function declaredCharset(data: Uint8Array): string | undefined {
  const label = META_CHARSET.exec(new TextDecoder("latin1").decode(data.subarray(0, PRESCAN_BYTES)))?.[1]?.toLowerCase();
  if (!label || /^(?:utf-?8|utf-?16)/.test(label)) return undefined;
  try {
    return new TextDecoder(label).encoding;
  } catch {
    return undefined;
  }
}

export async function parseHtml(data: Uint8Array): Promise<ParsedDocument> {
  return { pageCount: null, sections: htmlToSections(decodeText(data, declaredCharset(data))) };
}

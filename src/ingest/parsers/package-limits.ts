// Limits on what an Office package (docx, pptx, xlsx: a zip of XML parts) may decompress to, so a
// zip bomb (a few hundred KB inflating to gigabytes) fails its document instead of exhausting
// memory. Real documents stay far below them: the XML of a 500-page Word document or of a sheet
// with a million cells is tens of MB, and images are stored already compressed. The file limit
// is four times the 50 MB upload limit; Office files have tens to a few thousand parts (one per
// slide, sheet, image, relationship file).
export const PACKAGE_LIMITS = {
  partBytes: 100 * 1024 * 1024,
  fileBytes: 200 * 1024 * 1024,
  parts: 10_000,
} as const;
